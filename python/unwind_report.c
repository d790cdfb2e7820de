// SPDX-License-Identifier: GPL-2.0
/*
 * unwind_report: CPython 3.11 reports its Python frames to the kernel.
 *
 * No kernel walker can name the functions of a Python program: they are
 * data inside the interpreter's C frames. Importing this module opts the
 * process in to self-unwinding by signal (prctl(PR_USER_STACK_SIGNAL)):
 * whenever the kernel takes the user stack of one of its threads for a
 * deferred request (a perf sample with --call-graph fp,defer, say), it
 * signals that thread with the cookie, and the handler below walks the
 * thread's Python frames and reports them (prctl(PR_USER_STACK_REPORT)),
 * innermost first, as addresses that name them in /tmp/perf-PID.map, one
 * per code object: "file:function", the file's base name.
 *
 *   PYTHONPATH=build/python python3.11 -c 'import unwind_report; ...'
 *
 * The handler is async-signal-safe: it allocates nothing, takes no lock,
 * calls no Python API that needs the GIL, and uses only write() and
 * prctl(). It reads the thread's frame chain, which only the thread itself
 * changes, so the chain is consistent when the signal arrives at the end
 * of a system call. A signal that interrupts the interpreter between two
 * instructions may find a frame half pushed: the walk checks every
 * pointer it follows (frames lie in the thread's frame stack, or are a
 * generator's; code objects have the code type) and stops at the first
 * that fails, with the frames found.
 *
 * Limits: CPython 3.11 only (the layout of its frames is private and
 * changes between versions; import fails on another). The main
 * interpreter only: threads of subinterpreters report nothing. Threads
 * that Python created or knows report (their thread state is found with
 * PyGILState_GetThisThreadState()); others report nothing. At most
 * UR_NAMES code objects get their own name; the others are reported as
 * "[python]". A code object freed and another allocated at its address
 * with the same file and name share the first one's entry.
 */
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The kernel's si_code (asm-generic/siginfo.h), which <signal.h> lacks. */
#define SI_UNWIND		0x5557

/* Code objects with a name of their own, and the address space they take. */
#define UR_NAMES		8192
#define UR_SLOT_SIZE		16
/* Python frames one report carries at most. */
#define UR_DEPTH		128

/*
 * One code object and its address in the perf map. @code is set last
 * (by compare-and-swap): a slot is another thread's until then.
 */
struct ur_name {
	PyCodeObject	*code;
	PyObject	*filename;
	PyObject	*name;
};

static struct ur_name ur_names[UR_NAMES];
static unsigned long ur_base;	/* the slots' addresses, never run */
static int ur_map_fd = -1;
static int ur_signal;
static unsigned long ur_reports, ur_failed;

/* Append @s to @buf at @pos, bounded; returns the new position. */
static size_t ur_put(char *buf, size_t pos, size_t size, const char *s,
		     size_t len)
{
	if (len > size - pos)
		len = size - pos;
	memcpy(buf + pos, s, len);
	return pos + len;
}

static size_t ur_put_hex(char *buf, size_t pos, size_t size,
			 unsigned long v)
{
	char tmp[2 * sizeof(v)];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - ++n] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v && n < sizeof(tmp));
	return ur_put(buf, pos, size, tmp + sizeof(tmp) - n, n);
}

/*
 * The UTF-8 text of a str object without calling Python: only compact
 * strings that are ASCII or already carry their UTF-8 form qualify.
 */
static const char *ur_text(PyObject *o, size_t *len)
{
	if (!o || Py_TYPE(o) != &PyUnicode_Type || !PyUnicode_IS_COMPACT(o))
		return NULL;
	if (PyUnicode_IS_ASCII(o)) {
		*len = ((PyASCIIObject *)o)->length;
		return (const char *)(((PyASCIIObject *)o) + 1);
	}
	if (((PyCompactUnicodeObject *)o)->utf8) {
		*len = ((PyCompactUnicodeObject *)o)->utf8_length;
		return ((PyCompactUnicodeObject *)o)->utf8;
	}
	return NULL;
}

/* Write "ADDR SIZE file:function" for slot @i: one write(), O_APPEND. */
static void ur_map_line(unsigned int i, PyObject *filename, PyObject *name)
{
	char line[512];
	const char *s, *base;
	size_t pos = 0, len;

	pos = ur_put_hex(line, pos, sizeof(line), ur_base + i * UR_SLOT_SIZE);
	pos = ur_put(line, pos, sizeof(line), " ", 1);
	pos = ur_put_hex(line, pos, sizeof(line), UR_SLOT_SIZE);
	pos = ur_put(line, pos, sizeof(line), " ", 1);
	if (!i) {
		/* Slot 0: code objects that found no slot of their own. */
		pos = ur_put(line, pos, sizeof(line) - 1, "[python]", 8);
		goto end;
	}
	s = ur_text(filename, &len);
	if (s) {
		base = memrchr(s, '/', len);
		if (base) {
			len -= base + 1 - s;
			s = base + 1;
		}
		pos = ur_put(line, pos, sizeof(line) - 1, s, len);
	} else {
		pos = ur_put(line, pos, sizeof(line) - 1, "?", 1);
	}
	pos = ur_put(line, pos, sizeof(line) - 1, ":", 1);
	s = ur_text(name, &len);
	if (!s) {
		s = "?";
		len = 1;
	}
	pos = ur_put(line, pos, sizeof(line) - 1, s, len);
end:
	line[pos++] = '\n';
	if (write(ur_map_fd, line, pos) < 0)
		ur_failed++;
}

/*
 * The address that names @code: its slot's, claimed the first time. Slot
 * 0 is "[python]", for code objects that find no free slot.
 */
static unsigned long ur_addr(PyCodeObject *code)
{
	PyObject *filename = code->co_filename, *name = code->co_name;
	unsigned int h = ((uintptr_t)code >> 4) * 2654435761u;

	for (unsigned int n = 0; n < 64; n++) {
		unsigned int i = 1 + (h + n) % (UR_NAMES - 1);
		struct ur_name *e = &ur_names[i];
		PyCodeObject *cur = __atomic_load_n(&e->code, __ATOMIC_ACQUIRE);

		if (cur == code && e->filename == filename && e->name == name)
			return ur_base + i * UR_SLOT_SIZE;
		if (cur)
			continue;
		e->filename = filename;
		e->name = name;
		if (!__atomic_compare_exchange_n(&e->code, &cur, code, false,
						 __ATOMIC_RELEASE,
						 __ATOMIC_ACQUIRE)) {
			if (cur == code && e->filename == filename &&
			    e->name == name)
				return ur_base + i * UR_SLOT_SIZE;
			continue;
		}
		ur_map_line(i, filename, name);
		return ur_base + i * UR_SLOT_SIZE;
	}
	return ur_base;
}

/* Does @f lie in one of the chunks of @ts's frame stack? */
static bool ur_in_datastack(PyThreadState *ts, const void *f)
{
	int n = 0;

	for (_PyStackChunk *c = ts->datastack_chunk; c && n < 64;
	     c = c->previous, n++) {
		if ((const char *)f >= (const char *)c &&
		    (const char *)f + sizeof(_PyInterpreterFrame) <=
		    (const char *)c + c->size)
			return true;
	}
	return false;
}

/* Walk @ts's Python frames into @ips, innermost first. */
static int ur_walk(PyThreadState *ts, uint64_t *ips)
{
	_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL;
	int n = 0, seen = 0;

	while (f && n < UR_DEPTH && seen++ < 4 * UR_DEPTH) {
		PyCodeObject *code;

		/* A generator's frame lives in the generator object. */
		if (f->owner != FRAME_OWNED_BY_GENERATOR &&
		    !ur_in_datastack(ts, f))
			break;
		code = f->f_code;
		if (!code || Py_TYPE(code) != &PyCode_Type)
			break;
		/* Frames still being set up belong to no function yet. */
		if (f->owner == FRAME_OWNED_BY_GENERATOR ||
		    f->prev_instr >= _PyCode_CODE(code) + code->_co_firsttraceable)
			ips[n++] = ur_addr(code);
		f = f->previous;
	}
	return n;
}

static void ur_handler(int sig, siginfo_t *si, void *uc)
{
	uint64_t ips[UR_DEPTH];
	PyThreadState *ts;
	int saved = errno, n = 0;

	if (si->si_code != SI_UNWIND)
		return;
	ts = PyGILState_GetThisThreadState();
	if (ts)
		n = ur_walk(ts, ips);
	/* A report of no frames still answers the signal. */
	if (prctl(PR_USER_STACK_REPORT, (unsigned long)si->si_value.sival_ptr,
		  (unsigned long)ips, n, 0))
		ur_failed++;
	else
		ur_reports++;
	errno = saved;
}

static PyObject *ur_stats(PyObject *self, PyObject *args)
{
	return Py_BuildValue("{s:k,s:k,s:i}", "reports", ur_reports,
			     "failed", ur_failed, "signal", ur_signal);
}

static PyMethodDef ur_methods[] = {
	{ "stats", ur_stats, METH_NOARGS,
	  "Reports made and failed, and the signal used." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef ur_module = {
	PyModuleDef_HEAD_INIT, "unwind_report",
	"Report Python frames to the kernel's deferred unwinder (3.11).",
	-1, ur_methods,
};

/* Opt in: perf map, address range, handler, then the prctl. */
static int ur_opt_in(void)
{
	struct sigaction sa = { .sa_sigaction = ur_handler,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	char path[64];
	const char *env = getenv("UNWIND_REPORT_SIGNAL");
	void *base;

	ur_signal = env ? atoi(env) : SIGRTMAX - 2;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	ur_map_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (ur_map_fd < 0)
		return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path), -1;
	/*
	 * Addresses no other code has: an executable mapping that is never
	 * run, so that perf records it and names its addresses from the map.
	 */
	base = mmap(NULL, (size_t)UR_NAMES * UR_SLOT_SIZE, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return PyErr_SetFromErrno(PyExc_OSError), -1;
	ur_base = (unsigned long)base;
	ur_map_line(0, NULL, NULL);
	sigemptyset(&sa.sa_mask);
	if (sigaction(ur_signal, &sa, NULL))
		return PyErr_SetFromErrno(PyExc_OSError), -1;
	if (prctl(PR_USER_STACK_SIGNAL, ur_signal, 0, 0, 0)) {
		PyErr_Format(PyExc_OSError,
			     "prctl(PR_USER_STACK_SIGNAL, %d): %s (a kernel "
			     "without CONFIG_UNWIND_USER_REPORT?)", ur_signal,
			     strerror(errno));
		return -1;
	}
	return 0;
}

PyMODINIT_FUNC PyInit_unwind_report(void)
{
	if (PY_VERSION_HEX >> 16 != 0x030b ||
	    Py_Version >> 16 != PY_VERSION_HEX >> 16) {
		PyErr_SetString(PyExc_ImportError,
				"unwind_report reads CPython 3.11 frames only");
		return NULL;
	}
	if (ur_opt_in())
		return NULL;
	return PyModule_Create(&ur_module);
}
