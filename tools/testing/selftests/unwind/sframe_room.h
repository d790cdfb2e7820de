/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Room in an SFrame test object for sframe_convert to write the object's
 * table again in version 2 or 3, which are larger than version 1: a
 * read-only array, in a loaded segment, that starts with a marker.
 */
#ifndef SFRAME_ROOM_H
#define SFRAME_ROOM_H

#define SFRAME_ROOM_MAGIC	"SFRAME_ROOM"
#define SFRAME_ROOM_SIZE	16384

/* A global, so that it is kept; sframe_convert aligns the table in it. */
#define SFRAME_ROOM()							\
	const char sframe_room[SFRAME_ROOM_SIZE] = SFRAME_ROOM_MAGIC

#endif /* SFRAME_ROOM_H */
