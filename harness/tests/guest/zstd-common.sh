# SPDX-License-Identifier: GPL-2.0
# Sourced by real-zstd.sh and real-zstd-sframe.sh: the input they compress,
# and the count of one record type in a perf.data file.

# The same 22 MB in every run: the kernel's C sources, in a fixed order.
zstd_input() { # file
	find "$SRC/kernel" "$SRC/mm" "$SRC/fs" -name '*.c' | sort | xargs cat 2>/dev/null |
		head -c $((22 << 20)) >"$1" 2>/dev/null
}

# "<name> events: N" from perf report --stats (the first, aggregated one).
stat_of() { # perf.data name
	"$PERF" report -i "$1" --stats 2>/dev/null |
		awk -v n="$2" '$1 == n && $2 == "events:" { print $3; f = 1; exit }
			END { if (!f) print 0 }'
}
