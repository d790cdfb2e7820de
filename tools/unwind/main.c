// SPDX-License-Identifier: GPL-2.0
/*
 * cfi2sframe's command line; the usage is at the top of cfi2sframe.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi2sframe.h"
#include "convert.h"

static void help_and_exit(void)
{
	fputs("usage: cfi2sframe [-q] [-o OUT] ELF\n"
	      "       cfi2sframe -s [-v] ELF...\n"
	      "       cfi2sframe -c ELF\n"
	      "       cfi2sframe -B ELF\n"
	      "       cfi2sframe -R [-q] [-v] [-n] [-C DIR] PATH...\n"
	      "       cfi2sframe -U [-q] PATH...\n"
	      "       cfi2sframe -W [-q] [-v] [-C DIR]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *cache = NULL;
	bool stats = false, cmp = false, want_id = false, reg = false;
	bool unreg = false, reg_dry = false, watch = false;
	struct stats total = { 0 };
	int opt, ret = 0;

	while ((opt = getopt(argc, argv, "qvno:scBRUWC:")) != -1) {
		switch (opt) {
		case 'W':
			watch = true;
			break;
		case 'n':
			reg_dry = true;
			break;
		case 'R':
			reg = true;
			break;
		case 'U':
			unreg = true;
			break;
		case 'C':
			cache = optarg;
			break;
		case 'B':
			want_id = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 's':
			stats = true;
			break;
		case 'c':
			cmp = true;
			break;
		default:
			help_and_exit();
		}
	}
	if (watch) {
		if (optind < argc || stats || cmp || want_id || out || reg ||
		    unreg || reg_dry)
			help_and_exit();
		return watch_run(cache);
	}
	if (optind >= argc || (stats + cmp + want_id + !!out + reg + unreg) > 1 ||
	    (cache && !reg) || (reg_dry && !cache))
		help_and_exit();
	if (reg || unreg)
		return register_all(argv + optind, argc - optind, cache, unreg,
				    reg_dry);
	if (!stats && argc - optind != 1)
		help_and_exit();
	if (want_id) {
		struct object o;
		int err = open_object(&o, argv[optind]);

		if (!err)
			err = print_build_id(&o);
		if (err)
			fprintf(stderr, "cfi2sframe: %s: %s\n", argv[optind],
				err == -ENOENT ? "no build ID" : strerror(-err));
		close_object(&o);
		return err ? 1 : 0;
	}
	for (int i = optind; i < argc; i++) {
		struct stats st = { 0 };
		struct object o;
		int err = open_object(&o, argv[i]);

		if (!err)
			err = convert(&o, &st);
		if (err) {
			if (!stats || !quiet)
				fprintf(stderr, "cfi2sframe: %s: %s\n", argv[i],
					err == -ENOENT ? "no .eh_frame section" :
					err == -ENOEXEC ? "not a linked x86-64 ELF object" :
					err == -EINVAL ? "malformed .eh_frame" :
					strerror(-err));
			close_object(&o);
			reset();
			ret = ret ? ret : 1;
			continue;
		}
		finish(&st);
		if (stats) {
			if (!quiet)
				print_stats(argv[i], &st);
			total.fdes += st.fdes;
			total.exact += st.exact;
			total.partial += st.partial;
			total.none += st.none;
			total.rows += st.rows;
			for (int w = 0; w < WHY_NR; w++)
				total.why[w] += st.why[w];
		} else if (cmp) {
			ret = compare(&o);
		} else {
			size_t len;
			uint8_t *buf = write_sframe(&len);
			FILE *f = out ? fopen(out, "wb") : stdout;

			if (!f || fwrite(buf, 1, len, f) != len ||
			    (out && fclose(f)))
				die("cannot write %s", out ? out : "the table");
			free(buf);
			if (!quiet)
				fprint_stats(stderr, argv[i], &st);
		}
		close_object(&o);
		reset();
	}
	if (stats && argc - optind > 1)
		print_stats("total", &total);
	return ret;
}
