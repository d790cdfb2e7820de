#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Keep build/linux, the prepared kernel tree, in step with this repository.

The repository is the source of truth: BASE pins a Debian linux-source
package, patches/ holds quilt patches against existing files, and new files
(the overlay) sit at their in-tree paths. build/linux is a git repository
whose first commit (tag "base") is the pristine package.

  tree.py prepare [--force]  install/verify the base, unpack it once, then
                             bring the tree to base + patches + overlay,
                             rewriting only files whose content changes so
                             that Kbuild recompiles only what changed.
  tree.py refresh [--patch NAME]
                             write edits made in build/linux back into
                             patches/ and the overlay; with NAME, edits
                             to base files go to that patch even when an
                             earlier one edits the same file.
  tree.py series [--out DIR] export the series as the mails of its parts
                             (patches/parts: five series, each applying on
                             the one before, each with its cover letter)
                             and check that they rebuild the prepared tree
                             exactly.
  tree.py import REV         rewrite patches/ from the commits base..REV of
                             build/linux (the exported series, reordered or
                             edited with git rebase): one patch per commit,
                             each keeping the changelog of the patch with
                             its subject. REV must hold the tree as it is.
  tree.py steps [--save] PATH
                             write a new file as it stands after each patch
                             from the one that adds it (build/steps/PATH/),
                             or, with --save, store the differences between
                             those steps in the patches.

A new file lives in the repository in its final form (the overlay). A
patch after the one that adds it may grow it: that patch's diff of the file
is its growth, and the file as the adding patch adds it is the final form
with every later growth taken back. `make tree` uses the final form;
`make series` commits each step.

The tree remembers what it was last synced to (build/synced-tree, a git tree
id). prepare refuses to overwrite edits made in build/linux since then,
so nothing typed in the tree is lost; refresh keeps them, --force drops them.
"""

import argparse
import fcntl
import fnmatch
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "build")
TREE = os.path.join(BUILD, "linux")
PATCHES = os.path.join(REPO, "patches")
SERIES = os.path.join(PATCHES, "series")
NEW_FILES = os.path.join(PATCHES, "new-files")
STAMP_BASE = os.path.join(BUILD, "base.stamp")
STAMP_TREE = os.path.join(BUILD, "synced-tree")
STAMP_MANAGED = os.path.join(BUILD, "managed-files")

# Top-level directories of the repository that are kernel-tree paths; every
# file below them is part of the overlay.
OVERLAY_DIRS = ["arch", "Documentation", "include", "kernel", "lib", "mm",
                "samples", "scripts", "tools"]

GIT_ID = ["-c", "user.name=unwind-harness", "-c", "user.email=harness@localhost",
          "-c", "core.autocrlf=false", "-c", "gc.auto=0"]


class TreeError(Exception):
    pass


def die(msg):
    print("tree: " + msg, file=sys.stderr)
    sys.exit(1)


def run(cmd, cwd=None, check=True, capture=True, stdin=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, input=stdin, env=env,
                       stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.PIPE if capture else None)
    if check and p.returncode:
        err = (p.stderr or b"").decode(errors="replace").strip()
        raise TreeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, err))
    return p


def git(*args, cwd=TREE, check=True, stdin=None):
    return run(["git"] + GIT_ID + list(args), cwd=cwd, check=check, stdin=stdin)


def read_base():
    base = {}
    with open(os.path.join(REPO, "BASE")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, val = line.partition("=")
                base[key.strip()] = val.strip()
    for key in ("PACKAGE", "VERSION", "TARBALL", "SHA256"):
        if key not in base:
            die("BASE lacks %s" % key)
    return base


def installed_version(pkg):
    p = run(["dpkg-query", "-W", "-f=${Status} ${Version}", pkg], check=False)
    out = p.stdout.decode().split()
    if p.returncode or len(out) < 4 or out[2] != "installed":
        return None
    return out[3]


def offered_versions(pkg):
    p = run(["apt-cache", "madison", pkg], check=False)
    return [l.split("|")[1].strip() for l in p.stdout.decode().splitlines()
            if l.count("|") >= 2]


def ensure_base_package(base):
    """Install exactly the pinned version, or stop and say what apt offers."""
    pkg, ver = base["PACKAGE"], base["VERSION"]
    if installed_version(pkg) == ver:
        return
    print("tree: installing %s=%s with apt" % (pkg, ver))
    cmd = ["apt-get", "install", "-y", "--no-install-recommends",
           "--allow-downgrades", "%s=%s" % (pkg, ver)]
    if os.geteuid():
        cmd = ["sudo", "-n"] + cmd
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if run(cmd, check=False, env=env).returncode:
        # The package lists may be stale on a fresh machine: update once.
        update = ["apt-get", "update"]
        if os.geteuid():
            update = ["sudo", "-n"] + update
        run(update, check=False, env=env)
        run(cmd, check=False, env=env)
    if installed_version(pkg) != ver:
        offered = offered_versions(pkg)
        die("apt cannot install %s=%s, the version pinned in BASE.\n"
            "  apt offers: %s\n"
            "  To move the base, choose one of these deliberately: set VERSION\n"
            "  and SHA256 in BASE (sha256sum %s after installing it), rebuild\n"
            "  the tree from scratch (rm -rf build/linux) and check that every\n"
            "  patch still applies. Never build on an unverified base."
            % (pkg, ver, ", ".join(offered) or "nothing (run apt-get update?)",
               base["TARBALL"]))


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def base_id(base):
    return "%s %s %s\n" % (base["PACKAGE"], base["VERSION"], base["SHA256"])


def unpack_base(base):
    tarball = base["TARBALL"]
    if not os.path.exists(tarball):
        die("%s is missing although %s is installed" % (tarball, base["PACKAGE"]))
    digest = sha256_of(tarball)
    if digest != base["SHA256"]:
        die("%s has sha256 %s, BASE pins %s: refusing an unverified base"
            % (tarball, digest, base["SHA256"]))
    print("tree: unpacking %s into build/linux (once)" % os.path.basename(tarball))
    os.makedirs(BUILD, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="unpack.", dir=BUILD)
    run(["tar", "-xJf", tarball, "-C", tmp])
    top = os.listdir(tmp)
    if len(top) != 1:
        die("unexpected tarball layout: %s" % top)
    os.rename(os.path.join(tmp, top[0]), TREE)
    os.rmdir(tmp)
    git("init", "-q", "-b", "base-tree")
    git("add", "-A", "-f")
    git("commit", "-q", "--no-verify", "-m",
        "Base: Debian %s %s\n\nsha256 %s" % (base["PACKAGE"], base["VERSION"],
                                             base["SHA256"]))
    git("tag", "base")
    with open(STAMP_BASE, "w") as f:
        f.write(base_id(base))
    with open(STAMP_TREE, "w") as f:
        f.write(index_tree() + "\n")
    with open(STAMP_MANAGED, "w") as f:
        f.write("")


# Left behind by editors and by patch(1); never part of the series.
JUNK = re.compile(r"(~|\.swp|\.orig|\.rej|\.o|\.cmd)$")


def index_tree():
    """Stage the whole tree and return its git tree id.

    Debian's top-level .gitignore ignores every new path ("/*"), so new files
    are staged by name: all builds are out of tree, so anything untracked
    here was put there by a developer.
    """
    git("add", "-A")
    others = git("ls-files", "-z", "--others").stdout.decode().split("\0")
    others = [f for f in others if f and not JUNK.search(f)]
    if others:
        git("add", "-f", "--", *others)
    return git("write-tree").stdout.decode().strip()


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def series_patches():
    names = [l.split()[0] for l in read_lines(SERIES)]
    for n in names:
        if not os.path.exists(os.path.join(PATCHES, n)):
            die("patches/series names %s, which does not exist" % n)
    return names


DIFF_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
DIFF_OLD = re.compile(r"^--- (?:a/)?(\S+)")


_OVERLAY = None


def overlay_set():
    global _OVERLAY
    if _OVERLAY is None:
        _OVERLAY = set(overlay_files())
    return _OVERLAY


def patch_files(name, growth=False):
    """Base files a patch touches, from its ---/+++ lines; with @growth,
    the new files (overlay) it grows instead."""
    return [f for f in all_patch_files(name)
            if (f in overlay_set()) == growth]


def all_patch_files(name):
    """Paths a patch touches, from its ---/+++ lines."""
    files = []
    with open(os.path.join(PATCHES, name), errors="replace") as f:
        old = None
        for line in f:
            m = DIFF_OLD.match(line)
            if m:
                old = m.group(1)
                continue
            m = DIFF_FILE.match(line)
            if m and old is not None:
                path = m.group(1) if m.group(1) != "/dev/null" else old
                if path not in files:
                    files.append(path)
                old = None
    return files


def patch_has_diff(name):
    return bool(patch_files(name))


def diff_sections(name):
    """The per-file sections of a patch's diff: [(path, text)]."""
    _, diff = split_patch(name)
    parts = re.split(r"(?m)^(?=diff --git )", diff)
    out = []
    for part in parts:
        m = re.match(r"diff --git a/(\S+) b/(\S+)", part)
        if m:
            out.append((m.group(2), part))
    return out


def growth_text(name, path=None):
    """The sections of a patch that grow new files (all, or @path's)."""
    return "".join(t for f, t in diff_sections(name)
                   if f in overlay_set() and (path is None or f == path))


def overlay_files():
    """New files of the series: everything under OVERLAY_DIRS in the repo,
    tracked or not (ignored files excepted)."""
    p = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard",
             "--"] + OVERLAY_DIRS, cwd=REPO)
    files = [f for f in p.stdout.decode().split("\0") if f]
    return sorted(f for f in set(files) if os.path.isfile(os.path.join(REPO, f)))


def in_base(path):
    return git("cat-file", "-e", "base:" + path, check=False).returncode == 0


def export_base(paths, dest):
    """Write the base version of each path (that exists in base) under dest."""
    present = [p for p in paths if in_base(p)]
    if not present:
        return
    archive = git("archive", "--format=tar", "base", "--", *present).stdout
    run(["tar", "-x", "-C", dest], stdin=archive)


def run_patch(text, dest, what, reverse=False):
    """Apply diff @text under @dest with no fuzz (reversed if asked)."""
    p = run(["patch", "-d", dest, "-p1", "-F0", "-N", "-t",
             "--no-backup-if-mismatch", "-r", "-"] + (["-R"] if reverse else []),
            check=False, stdin=text.encode(errors="surrogateescape"))
    if p.returncode:
        out = (p.stdout + p.stderr).decode(errors="replace").strip()
        raise TreeError("%s does not apply with no fuzz:\n%s" % (what, out))


def apply_patch(name, dest):
    """Apply a patch's edits to base files (not its growth of new files,
    whose final form the overlay holds)."""
    if not patch_has_diff(name):
        return
    text = "".join(t for f, t in diff_sections(name) if f not in overlay_set())
    if not text:
        # A patch written by hand without "diff --git" lines.
        text = open(os.path.join(PATCHES, name), errors="surrogateescape").read()
    run_patch(text, dest, "patch %s" % name)


def first_versions(patches, mapping, dest):
    """Write under @dest each new file as the patch that adds it adds it:
    the overlay's final form with the growth of every later patch taken
    back, last patch first."""
    for f in overlay_set():
        src = os.path.join(REPO, f)
        dst = os.path.join(dest, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    for n in reversed(patches):
        text = growth_text(n)
        if not text:
            continue
        for f in patch_files(n, growth=True):
            if f in mapping and patches.index(mapping[f]) >= patches.index(n):
                raise TreeError("patch %s grows %s, which patch %s adds later"
                                % (n, f, mapping[f]))
        run_patch(text, dest, "the growth in patch %s, taken back from the "
                  "overlay's final form" % n, reverse=True)


def desired_state(scratch):
    """Build base + patches + overlay for the managed files under scratch.
    Returns the set of managed paths."""
    patches = series_patches()
    patched = []
    for n in patches:
        for f in patch_files(n):
            if f not in patched:
                patched.append(f)
    export_base(patched, scratch)
    for n in patches:
        apply_patch(n, scratch)
    overlay = overlay_files()
    clash = [f for f in overlay if in_base(f)]
    if clash:
        raise TreeError("these overlay files already exist in the base; edit "
                        "them through a patch instead: %s" % ", ".join(clash))
    for f in overlay:
        dst = os.path.join(scratch, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(REPO, f), dst)
    managed = set(patched) | set(overlay)
    # A patch may delete a file; it is managed but absent from scratch.
    return managed


def remove_file(path):
    """Delete a file of the tree and any directories it leaves empty."""
    os.unlink(path)
    d = os.path.dirname(path)
    while d != TREE and not os.listdir(d):
        os.rmdir(d)
        d = os.path.dirname(d)


def same_content(a, b):
    if not (os.path.exists(a) and os.path.exists(b)):
        return os.path.exists(a) == os.path.exists(b)
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def same_mode(a, b):
    return (os.stat(a).st_mode & 0o111 != 0) == (os.stat(b).st_mode & 0o111 != 0)


def check_unsaved_edits(force):
    synced = open(STAMP_TREE).read().strip()
    now = index_tree()
    if now == synced:
        return
    changed = git("diff", "--stat", synced, now).stdout.decode().rstrip()
    if force:
        print("tree: dropping edits made in build/linux:\n" + changed)
        return
    die("build/linux has edits that are not in the repository yet:\n%s\n"
        "  Keep them with `make refresh`, or drop them with `make tree FORCE=1`."
        % changed)


def cmd_prepare(args):
    base = read_base()
    ensure_base_package(base)
    if os.path.isdir(TREE):
        have = open(STAMP_BASE).read() if os.path.exists(STAMP_BASE) else ""
        if have != base_id(base):
            die("build/linux was prepared from another base (%s); BASE now says "
                "%s. Remove build/linux to rebuild it." % (have.strip() or "?",
                                                           base_id(base).strip()))
    else:
        unpack_base(base)
    check_unsaved_edits(args.force)

    previous = set(read_lines(STAMP_MANAGED))
    with tempfile.TemporaryDirectory(prefix="scratch.", dir=BUILD) as scratch:
        try:
            managed = desired_state(scratch)
        except TreeError as e:
            die(str(e))
        written = removed = 0
        for path in sorted(managed | previous):
            want = os.path.join(scratch, path)
            have = os.path.join(TREE, path)
            if path not in managed:
                # No longer part of the series: back to the base.
                if in_base(path):
                    git("checkout", "base", "--", path)
                    written += 1
                elif os.path.exists(have):
                    remove_file(have)
                    removed += 1
                continue
            if not os.path.exists(want):
                if os.path.exists(have):
                    remove_file(have)
                    removed += 1
                continue
            if same_content(want, have) and same_mode(want, have):
                continue
            os.makedirs(os.path.dirname(have), exist_ok=True)
            if os.path.exists(have):
                os.unlink(have)
            shutil.copyfile(want, have)
            shutil.copymode(want, have)
            written += 1
    with open(STAMP_MANAGED, "w") as f:
        f.write("".join(p + "\n" for p in sorted(managed)))
    with open(STAMP_TREE, "w") as f:
        f.write(index_tree() + "\n")
    print("tree: build/linux = base + %d patches + %d new files "
          "(%d files written, %d removed)"
          % (len(series_patches()), len(overlay_files()), written, removed))


# ---------------------------------------------------------------- refresh

def split_patch(name):
    """Return (header, diff) of a patch file."""
    text = open(os.path.join(PATCHES, name), errors="surrogateescape").read()
    m = re.search(r"^diff --git |^--- ", text, re.M)
    if not m:
        return text, ""
    return text[:m.start()], text[m.start():]


def diff_states(before_dir, after_dir, paths):
    """A git-style diff of paths between two directories."""
    with tempfile.TemporaryDirectory(prefix="diff.", dir=BUILD) as tmp:
        gitdir = ["--git-dir=" + os.path.join(tmp, ".git"), "--work-tree=" + tmp]
        run(["git"] + GIT_ID + gitdir + ["init", "-q"])
        for root, label in ((before_dir, "before"), (after_dir, "after")):
            for p in paths:
                src, dst = os.path.join(root, p), os.path.join(tmp, p)
                if os.path.lexists(dst):
                    os.unlink(dst)
                if os.path.exists(src):
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy2(src, dst)
            run(["git"] + GIT_ID + gitdir + ["add", "-A", "--"] + paths, cwd=tmp)
            if label == "before":
                run(["git"] + GIT_ID + gitdir +
                    ["commit", "-q", "--allow-empty", "-m", "before"], cwd=tmp)
                # The after state is added to a new index: one that
                # trusted its stat cache would miss a change that keeps
                # a file's size and time (a step that reorders lines,
                # copied with the time of the one before).
                os.unlink(os.path.join(tmp, ".git", "index"))
        return run(["git"] + GIT_ID + gitdir +
                   ["diff", "--cached", "-p", "--stat", "--no-renames",
                    "--", *paths], cwd=tmp).stdout.decode(errors="surrogateescape")


def template_header(name):
    return ("From: %s <%s>\nSubject: [PATCH] FIXME: subject of %s\n\n"
            "FIXME: say why this change is needed.\n\n"
            "Signed-off-by: %s <%s>\n---\n"
            % (git_user("name"), git_user("email"), name,
               git_user("name"), git_user("email")))


def git_user(key):
    p = run(["git", "config", "user." + key], cwd=REPO, check=False)
    return p.stdout.decode().strip() or "Unknown"


def cmd_refresh(args):
    if not os.path.isdir(TREE):
        die("no prepared tree: run `make tree` first")
    synced = open(STAMP_TREE).read().strip()
    now = index_tree()
    changes = git("diff", "--name-status", "--no-renames", synced, now).stdout.decode()
    changed = [l.split("\t", 1)[1] for l in changes.splitlines() if "\t" in l]
    if not changed:
        print("tree: nothing to refresh")
        return
    overlay = set(overlay_files())
    patches = series_patches()
    owner = {}
    for n in patches:
        for f in patch_files(n):
            owner[f] = n          # the last patch touching f owns later edits
    unowned = []
    to_regen = {}
    for path in changed:
        if path in overlay or not in_base(path):
            src, dst = os.path.join(TREE, path), os.path.join(REPO, path)
            if os.path.exists(src):
                if path.split("/")[0] not in OVERLAY_DIRS:
                    die("%s is a new file outside the overlay directories (%s)"
                        % (path, " ".join(OVERLAY_DIRS)))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)
                print("tree: overlay  %s" % path)
            elif os.path.exists(dst):
                os.unlink(dst)
                print("tree: overlay  %s (deleted)" % path)
            continue
        later = args.patch and (args.patch not in patches or
                                patches.index(owner.get(path, args.patch)) <
                                patches.index(args.patch))
        if path in owner and not later:
            to_regen.setdefault(owner[path], []).append(path)
        else:
            # New to the series, or named for a later patch: a base file
            # that an earlier patch edits gets a further diff in PATCH.
            unowned.append(path)
    if unowned:
        if not args.patch:
            die("no patch touches these files yet; name the patch that should "
                "carry them with `make refresh PATCH=NNNN-subject.patch`:\n  "
                + "\n  ".join(unowned))
        if args.patch not in patches:
            with open(os.path.join(PATCHES, args.patch), "w") as f:
                f.write(template_header(args.patch))
            with open(SERIES, "a") as f:
                f.write(args.patch + "\n")
            patches.append(args.patch)
            print("tree: new patch %s added to the series; write its header"
                  % args.patch)
        to_regen.setdefault(args.patch, []).extend(unowned)

    with tempfile.TemporaryDirectory(prefix="refresh.", dir=BUILD) as scratch:
        state = os.path.join(scratch, "state")
        os.makedirs(state)
        allfiles = sorted({f for n in patches for f in patch_files(n)} | set(unowned))
        export_base(allfiles, state)
        last_owner = {}
        for n in patches:
            for f in patch_files(n) + (unowned if n == args.patch else []):
                last_owner[f] = n
        for n in patches:
            files = patch_files(n)
            if n not in to_regen:
                apply_patch(n, state)
                continue
            files = files + [f for f in to_regen[n] if f not in files]
            before = os.path.join(scratch, "before")
            shutil.rmtree(before, ignore_errors=True)
            shutil.copytree(state, before)
            apply_patch(n, state)
            for f in files:
                if last_owner.get(f) != n:
                    continue
                src, dst = os.path.join(TREE, f), os.path.join(state, f)
                if os.path.exists(dst):
                    os.unlink(dst)
                if os.path.exists(src):
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy2(src, dst)
            header, _ = split_patch(n)
            # The diffstat is written anew below, with the diff.
            m = re.search(r"^---[ \t]*\n", header, re.M)
            if m:
                header = header[:m.end()]
            diff = diff_states(before, state, files) if files else ""
            # Growth of new files stays as it is: the overlay holds their
            # final form, and `tree.py steps` their steps.
            diff += growth_text(n)
            with open(os.path.join(PATCHES, n), "w", errors="surrogateescape") as f:
                f.write(header + diff)
            print("tree: refreshed %s" % n)
    with open(STAMP_TREE, "w") as f:
        f.write(now + "\n")


# ----------------------------------------------------------------- series

def parse_header(name):
    header, _ = split_patch(name)
    # The changelog ends at the "---" line; the diffstat after it is not part
    # of the commit message.
    m = re.search(r"^---[ \t]*$", header, re.M)
    if m:
        header = header[:m.start()]
    author = None
    subject = None
    body = []
    lines = header.splitlines()
    i = 0
    while i < len(lines) and lines[i].strip():
        if lines[i].startswith("From:"):
            author = lines[i][5:].strip()
        elif lines[i].startswith("Subject:"):
            subject = re.sub(r"^\[PATCH[^\]]*\]\s*", "", lines[i][8:].strip())
        i += 1
    body = "\n".join(lines[i:]).strip()
    if not subject or "FIXME" in subject or "FIXME" in body:
        die("patches/%s has no finished Subject/changelog header" % name)
    if "Signed-off-by:" not in body:
        die("patches/%s has no Signed-off-by" % name)
    return author, subject, body


PARTS = os.path.join(PATCHES, "parts")


def series_parts(patches):
    """The series the export is cut into: [(name, patches, cover)] from
    patches/parts, each part running from its first patch to the one
    before the next part's first."""
    rows = []
    for line in read_lines(PARTS):
        f = line.split()
        if len(f) != 3:
            die("patches/parts: bad line %r (want: NAME FIRST-PATCH COVER)" % line)
        if f[1] not in patches:
            die("patches/parts: %s is not in patches/series" % f[1])
        if not os.path.exists(os.path.join(PATCHES, f[2])):
            die("patches/parts: no cover letter %s" % f[2])
        rows.append(f)
    starts = [patches.index(f[1]) for f in rows]
    if not rows or starts[0] != 0 or starts != sorted(set(starts)):
        die("patches/parts must start at the first patch, in the series' order")
    ends = starts[1:] + [len(patches)]
    return [(f[0], patches[a:b], os.path.join(PATCHES, f[2]))
            for f, a, b in zip(rows, starts, ends)]


def check_cover_letter(cover, subjects):
    """The cover text must stay true as patches come and go: it names no
    patch by number (git format-patch puts the numbered shortlog under it)
    and mentions the subsystem of every patch (the prefix of its subject,
    such as "perf tools" or "tracing")."""
    name = os.path.relpath(cover, REPO)
    blurb = open(cover).read().partition("\n\n")[2]
    numbered = re.findall(r"\b[Pp]atch(?:es)? \d+", blurb)
    if numbered:
        die("%s names patches by number (%s): describe them by subsystem, "
            "the shortlog numbers them" % (name, ", ".join(numbered)))
    flat = " ".join(blurb.split())
    missing = []
    for subject in subjects:
        prefix = subject.partition(":")[0].strip()
        if prefix and prefix not in flat:
            missing.append("%s (%s)" % (prefix, subject))
    if missing:
        die("%s does not describe these patches' subsystems:\n  " % name
            + "\n  ".join(missing))


# What a user or another kernel subsystem can name, as the series adds it:
# the cover letter lists each (check_cover_interfaces()).
UAPI_NAME = [
    re.compile(r"^\+\s*#\s*define\s+([A-Z][A-Z0-9_]+)"),
    re.compile(r"^\+\s*([A-Z][A-Z0-9_]+)\s*=\s*[-0-9(]"),
    re.compile(r"^\+\s*(?:__u64\s+)?([a-z]\w*)\s*:\s*1\s*[,;]"),
]
KERNEL_NAME = [
    re.compile(r"^\+config\s+(\w+)"),
    re.compile(r"\b(?:TRACE_EVENT|DECLARE_TRACE|DECLARE_EVENT_CLASS)\(\s*(\w+)"),
    re.compile(r"\bDEFINE_EVENT\(\s*\w+\s*,\s*(\w+)"),
    re.compile(r"\bFTRACE_ENTRY(?:_PACKED|_REG)?\(\s*(\w+)"),
    re.compile(r"__bpf_kfunc\s+[\w\s\*]*?\b(\w+)\s*\("),
    re.compile(r"^\+\s*C\(\s*\w+\s*,\s*\"(\w+)\"\s*\)"),
]


def series_interfaces(patches, new_files, first_dir):
    """Names of the interfaces the series adds: uapi defines, enum values
    and perf_event_attr bits; Kconfig symbols; trace events and ftrace
    entries; kfuncs; tracefs options."""
    names = set()
    for n in patches:
        path = None
        for line in open(os.path.join(PATCHES, n)).read().splitlines():
            if line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else None
                continue
            if not path or not line.startswith("+"):
                continue
            # Kconfig symbols in Kconfig files only: a document's line may
            # start with "config" too.
            pats = list(KERNEL_NAME if "Kconfig" in path else KERNEL_NAME[1:])
            if path.startswith("include/uapi/"):
                pats += UAPI_NAME
            for pat in pats:
                names.update(pat.findall(line))
    for f in new_files:
        if not f.endswith((".c", ".h")) or f.startswith("tools/") or \
           "/tests/" in f:
            continue
        # The file as its patch adds it: later growth is in later patches.
        for line in open(os.path.join(first_dir, f)).read().splitlines():
            for pat in KERNEL_NAME[1:5]:
                names.update(pat.findall(line))
    # Macro parameters of the trace event headers, not events.
    return sorted(x for x in names if x not in ("name", "call", "template"))


def check_cover_interfaces(cover, names):
    """Every interface a part adds is named in its cover letter."""
    flat = open(cover).read()
    missing = [x for x in names if not re.search(r"\b%s\b" % re.escape(x), flat)]
    if missing:
        die("%s does not name these interfaces its series adds:\n  "
            % os.path.relpath(cover, REPO) + "\n  ".join(missing))


def check_cover_patches(cover, subjects):
    """Every patch is described in its part's cover letter, by its subject
    after the subsystem prefix."""
    flat = " ".join(open(cover).read().split()).lower()
    missing = [s for s in subjects
               if " ".join(s.partition(":")[2].split()).lower() not in flat]
    if missing:
        die("%s does not describe these patches (quote each subject after "
            "its prefix):\n  " % os.path.relpath(cover, REPO) + "\n  ".join(missing))


MAINTAINERS_ENTRY = "USER SPACE STACK UNWINDING"


def check_maintainers(tree, added):
    """scripts/get_maintainer.pl names the series' entry for every file the
    series adds."""
    missing = []
    for f in added:
        out = run(["perl", "scripts/get_maintainer.pl", "--no-git",
                   "--no-git-fallback", "--subsystem", "--no-email", "--no-l",
                   "--no-tree", "-f", f], cwd=tree, check=False).stdout.decode()
        if MAINTAINERS_ENTRY not in out:
            missing.append(f)
    if missing:
        die("MAINTAINERS' %s entry does not cover:\n  %s"
            % (MAINTAINERS_ENTRY, "\n  ".join(missing)))


def check_maintainers_named(tree, patch):
    """The series' MAINTAINERS entry names only files that exist at
    @patch: it grows with the patches that add what it names."""
    text = open(os.path.join(tree, "MAINTAINERS"), errors="replace").read()
    m = re.search(r"(?m)^%s\n((?:[A-Z]:.*\n)+)" % re.escape(MAINTAINERS_ENTRY), text)
    if not m:
        return
    pats = [l[2:].strip() for l in m.group(1).splitlines() if l.startswith("F:")]
    files = git("ls-files", cwd=tree).stdout.decode().splitlines()
    for pat in pats:
        if pat.endswith("/"):
            hit = any(f.startswith(pat) for f in files)
        else:
            hit = any(fnmatch.fnmatchcase(f, pat) for f in files)
        if not hit:
            raise TreeError("after patch %s, MAINTAINERS' %s entry names %s, "
                            "which no file matches yet: add the line with the "
                            "patch that adds the file" % (patch, MAINTAINERS_ENTRY, pat))


DOC = "Documentation/trace/unwind_deferred.rst"


def check_doc_named(tree, patch, later):
    """The series' document names no interface a later patch adds: it
    grows with the patches. @later maps each such name to its patch."""
    path = os.path.join(tree, DOC)
    if not os.path.exists(path):
        return
    text = open(path).read()
    early = ["%s (%s)" % (x, p) for x, p in sorted(later.items())
             if re.search(r"\b%s\b" % re.escape(x), text)]
    if early:
        raise TreeError("after patch %s, %s names interfaces later patches "
                        "add:\n  %s" % (patch, DOC, "\n  ".join(early)))


def fill_cover_letter(path, cover):
    """Put a part's cover text (subject line, blank line, text) into the
    cover letter that git format-patch left with placeholders."""
    subject, _, blurb = open(cover).read().partition("\n\n")
    text = open(path).read()
    text = text.replace("*** SUBJECT HERE ***", subject.strip())
    text = text.replace("*** BLURB HERE ***", blurb.strip())
    text = text.replace("From: unwind-harness <harness@localhost>",
                        "From: %s <%s>" % (git_user("name"), git_user("email")))
    open(path, "w").write(text)


def cmd_series(args):
    if not os.path.isdir(TREE):
        die("no prepared tree: run `make tree` first")
    # Two exports at once (make bisect runs one) would share the
    # worktrees below and fail each other with misleading errors.
    lock = open(os.path.join(BUILD, "series.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    check_unsaved_edits(False)
    patches = series_patches()
    mapping = {}
    for line in read_lines(NEW_FILES):
        parts = line.split()
        if len(parts) != 2:
            die("patches/new-files: bad line %r (want: PATH PATCH)" % line)
        mapping[parts[0]] = parts[1]
    overlay = overlay_files()
    unmapped = [f for f in overlay if f not in mapping]
    if unmapped:
        die("patches/new-files does not say which patch adds:\n  " +
            "\n  ".join(unmapped))
    stale = [f for f in mapping if f not in overlay]
    bad = sorted({p for p in mapping.values() if p not in patches})
    if stale or bad:
        die("patches/new-files names missing files %s or patches not in the "
            "series %s" % (stale, bad))
    out = os.path.abspath(args.out)
    wt = os.path.join(BUILD, "series-worktree")
    check = os.path.join(BUILD, "series-check")
    for d in (wt, check):
        git("worktree", "remove", "--force", d, check=False)
        shutil.rmtree(d, ignore_errors=True)
    git("worktree", "prune")
    parts = series_parts(patches)
    first = os.path.join(BUILD, "series-first")
    shutil.rmtree(first, ignore_errors=True)
    try:
        first_versions(patches, mapping, first)
        for name, part, cover in parts:
            subjects = [parse_header(n)[1] for n in part]
            check_cover_letter(cover, subjects)
            check_cover_patches(cover, subjects)
            born = [f for f, n in mapping.items() if n in part]
            check_cover_interfaces(cover, series_interfaces(part, born, first))
        added_by = {}
        for n in patches:
            born = [f for f, p in mapping.items() if p == n]
            for x in series_interfaces([n], born, first):
                added_by.setdefault(x, n)
        git("worktree", "add", "-q", "--detach", wt, "base")
        commits = {}
        for i, n in enumerate(patches):
            author, subject, body = parse_header(n)
            apply_patch(n, wt)
            for f in [f for f, p in mapping.items() if p == n]:
                dst = os.path.join(wt, f)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(os.path.join(first, f), dst)
            if growth_text(n):
                run_patch(growth_text(n), wt, "the growth in patch %s" % n)
            # -f: Debian's top-level .gitignore would hide new files.
            git("add", "-A", "-f", cwd=wt)
            cmd = ["commit", "-q", "--no-verify", "--allow-empty", "-m",
                   subject + "\n\n" + body]
            if author:
                cmd += ["--author", author]
            git(*cmd, cwd=wt)
            commits[n] = git("rev-parse", "HEAD", cwd=wt).stdout.decode().strip()
            check_maintainers_named(wt, n)
            check_doc_named(wt, n, {x: p for x, p in added_by.items()
                                    if patches.index(p) > i})
        shutil.rmtree(out, ignore_errors=True)
        # The whole run, numbered as one, for the bisect lane; then each
        # part as the series a maintainer gets, with its cover letter.
        git("format-patch", "-q", "--no-cover-letter", "-o", out, "base..HEAD",
            cwd=wt)
        part_mails = []
        for name, part, cover in parts:
            since = "base" if part[0] == patches[0] else commits[part[0]] + "^"
            dest = os.path.join(out, name)
            prefix = "RFC PATCH" if name.endswith("-rfc") else "PATCH"
            git("format-patch", "-q", "--cover-letter", "--subject-prefix=" + prefix,
                "-o", dest,
                "%s..%s" % (since, commits[part[-1]]), cwd=wt)
            fill_cover_letter(os.path.join(dest, "0000-cover-letter.patch"), cover)
            part_mails += [os.path.join(dest, m) for m in sorted(os.listdir(dest))
                           if not m.startswith("0000-")]
        for name, part, cover in parts:
            since = "base" if part[0] == patches[0] else commits[part[0]] + "^"
            print("tree: %s adds %s" % (name, lines_added(
                wt, "%s..%s" % (since, commits[part[-1]]))))
        # Verify: the parts' mails, in order, apply to the pristine base and
        # rebuild the tree.
        git("worktree", "add", "-q", "--detach", check, "base")
        if part_mails:
            git("am", "-q", "--whitespace=nowarn", *part_mails, cwd=check)
        got = git("rev-parse", "HEAD^{tree}", cwd=check).stdout.decode().strip()
        want = open(STAMP_TREE).read().strip()
        if got != want:
            diff = git("diff", "--stat", got, want).stdout.decode()
            die("the exported series does not rebuild the prepared tree:\n" + diff)
        added = git("diff", "--name-only", "--diff-filter=A", "base", "HEAD",
                    cwd=check).stdout.decode().split()
        check_maintainers(check, added)
    except TreeError as e:
        die(str(e))
    finally:
        for d in (wt, check):
            git("worktree", "remove", "--force", d, check=False)
        git("worktree", "prune", check=False)
        shutil.rmtree(first, ignore_errors=True)
    print("tree: %d patches in %s, as %d series (%s); git am of the series "
          "in order on the base rebuilds build/linux exactly"
          % (len(patches), os.path.relpath(out, REPO), len(parts),
             ", ".join("%s: %d" % (p[0], len(p[1])) for p in parts)))


# ------------------------------------------------------------------ steps

STEPS = os.path.join(BUILD, "steps")


def new_file_patches(path):
    patches = series_patches()
    mapping = {}
    for line in read_lines(NEW_FILES):
        parts = line.split()
        if len(parts) == 2:
            mapping[parts[0]] = parts[1]
    if path not in mapping or path not in overlay_set():
        die("%s is not a new file of the series (patches/new-files)" % path)
    return patches, mapping, patches[patches.index(mapping[path]):]


def line_kind(path):
    """What a file of the series is, for counting a series' size: tests
    (KUnit, its Kconfig in lib/Kconfig.debug, kselftests, ftracetest and
    perf's tests), docs (Documentation, MAINTAINERS, perf's manual pages)
    or code (everything else, tools included)."""
    if (path.startswith(("tools/testing/", "tools/perf/tests/")) or
            "/tests/" in path or path == "lib/Kconfig.debug"):
        return "tests"
    if path.startswith(("Documentation/", "tools/perf/Documentation/")) or \
            path == "MAINTAINERS":
        return "docs"
    return "code"


def lines_added(cwd, revs):
    """Lines a range of commits adds, by kind: "N of code, N of docs, N of
    tests" (the issue's measure of a series: what it adds outside tests)."""
    count = {"code": 0, "docs": 0, "tests": 0}
    out = git("diff", "--numstat", "--no-renames", revs, cwd=cwd).stdout.decode()
    for line in out.splitlines():
        added, _, path = line.split("\t", 2)
        if added != "-":
            count[line_kind(path)] += int(added)
    return ", ".join("{:,} of {}".format(count[k], k)
                     for k in ("code", "docs", "tests"))


def cmd_steps(args):
    """Write, or save, the steps by which a new file grows."""
    path = args.path
    patches, mapping, steps = new_file_patches(path)
    out = os.path.join(STEPS, path)
    if args.save:
        names = sorted(os.listdir(out)) if os.path.isdir(out) else []
        if [n.split("-", 1)[1] for n in names] != steps:
            die("%s does not hold one file per patch from %s on; run "
                "`tree.py steps %s` first" % (out, steps[0], path))
        if not same_content(os.path.join(out, names[-1]), os.path.join(REPO, path)):
            die("the last step differs from %s: edit the file itself for the "
                "final form, the steps for the earlier ones" % path)
        with tempfile.TemporaryDirectory(prefix="steps.", dir=BUILD) as tmp:
            a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            for prev, cur, n in zip(names, names[1:], steps[1:]):
                for d, src in ((a, prev), (b, cur)):
                    os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
                    shutil.copy2(os.path.join(out, src), os.path.join(d, path))
                diff = diff_states(a, b, [path])
                m = re.search(r"(?m)^diff --git ", diff)
                section = diff[m.start():] if m else ""
                header, _ = split_patch(n)
                rest = "".join(t for f, t in diff_sections(n) if f != path)
                with open(os.path.join(PATCHES, n), "w",
                          errors="surrogateescape") as f:
                    f.write(header + rest + section)
                if section:
                    print("tree: %s grows %s" % (n, path))
        return
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with tempfile.TemporaryDirectory(prefix="steps.", dir=BUILD) as tmp:
        try:
            first_versions(patches, mapping, tmp)
            for i, n in enumerate(steps):
                if i:
                    text = growth_text(n, path)
                    if text:
                        run_patch(text, tmp, "the growth in patch %s" % n)
                shutil.copy2(os.path.join(tmp, path),
                             os.path.join(out, "%02d-%s" % (i, n)))
        except TreeError as e:
            die(str(e))
    print("tree: %s after each patch from %s on, in %s; edit the earlier "
          "ones, then `tree.py steps --save %s`"
          % (path, steps[0], os.path.relpath(out, REPO), path))


# ------------------------------------------------------------------ import

def cmd_import(args):
    """Rewrite patches/ from a git series: the way to reorder patches.

    The commits base..REV replace the series. Each takes the name and
    changelog of the patch with its subject (so a commit's own message is
    ignored: edit changelogs in patches/), its number from its place, its
    base files' diff as its quilt patch, and its diff of a new file as
    that file's growth; a new file belongs to the commit that adds it.
    The overlay stays as it is, which is why REV must hold the tree the
    repository gives now."""
    if not os.path.isdir(TREE):
        die("no prepared tree: run `make tree` first")
    check_unsaved_edits(False)
    rev = git("rev-parse", "--verify", args.rev + "^{commit}").stdout.decode().strip()
    want = open(STAMP_TREE).read().strip()
    if git("rev-parse", rev + "^{tree}").stdout.decode().strip() != want:
        die("%s does not hold the tree of this repository: a reorder must "
            "end where the series ends" % args.rev)
    commits = git("rev-list", "--reverse", "--first-parent", "base.." + rev
                  ).stdout.decode().split()
    old = series_patches()
    by_subject = {parse_header(n)[1]: n for n in old}
    names = []
    for c in commits:
        subject = git("log", "-1", "--format=%s", c).stdout.decode().strip()
        if subject not in by_subject:
            die("commit %s (%s) has the subject of no patch" % (c[:12], subject))
        names.append(by_subject.pop(subject))
    if by_subject:
        die("no commit has the subject of " + ", ".join(sorted(by_subject.values())))
    new_names = ["%04d-%s" % (i + 1, n.split("-", 1)[1]) for i, n in enumerate(names)]
    texts = {}
    adds = {}
    for c, n, nn in zip(commits, names, new_names):
        status = git("diff", "--name-status", "--no-renames", c + "^", c
                     ).stdout.decode().splitlines()
        base_files, growth = [], []
        for line in status:
            st, path = line.split("\t", 1)
            if in_base(path):
                base_files.append(path)
            elif st == "A":
                adds[path] = nn
            elif st == "M":
                growth.append(path)
            else:
                die("commit %s deletes %s, a new file of the series" % (c[:12], path))
        header, _ = split_patch(n)
        m = re.search(r"^---[ \t]*$", header, re.M)
        text = (header[:m.end()] if m else header.rstrip("\n") + "\n---") + "\n"
        if base_files:
            text += git("diff", "--patch-with-stat", "--abbrev=7", "--no-renames",
                        c + "^", c,
                        "--", *base_files).stdout.decode(errors="surrogateescape")
        if growth:
            text += git("diff", "-p", "--abbrev=7", "--no-renames", c + "^", c,
                        "--", *growth
                        ).stdout.decode(errors="surrogateescape")
        texts[nn] = text
    if set(adds) != overlay_set():
        die("the commits add other new files than the overlay holds: %s"
            % sorted(set(adds) ^ overlay_set()))
    for n in old:
        os.unlink(os.path.join(PATCHES, n))
    for nn in new_names:
        with open(os.path.join(PATCHES, nn), "w", errors="surrogateescape") as f:
            f.write(texts[nn])
    renamed = dict(zip(names, new_names))
    with open(SERIES) as f:
        lines = f.read().splitlines()
    comments = [l for l in lines if l.startswith("#")]
    with open(SERIES, "w") as f:
        f.write("\n".join(comments + new_names) + "\n")
    with open(NEW_FILES) as f:
        lines = f.read().splitlines()
    with open(NEW_FILES, "w") as f:
        for line in lines:
            parts = line.split()
            if len(parts) == 2:
                line = "%s %s" % (parts[0], adds[parts[0]])
            f.write(line + "\n")
    rows = []
    for line in (open(PARTS).read().splitlines() if os.path.exists(PARTS) else []):
        f = line.split()
        if len(f) == 3 and not line.startswith("#"):
            line = " ".join([f[0], renamed.get(f[1], f[1]), f[2]])
        rows.append(line)
    if rows:
        with open(PARTS, "w") as f:
            f.write("\n".join(rows) + "\n")
    moved = [(n, nn) for n, nn in renamed.items() if n.split("-", 1)[0] != nn.split("-", 1)[0]]
    for n, nn in moved:
        print("tree: %s is now %s" % (n, nn))
    print("tree: %d patches from %s; run `tree.py prepare` and `tree.py series`"
          % (len(new_names), args.rev))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--force", action="store_true")
    p = sub.add_parser("refresh")
    p.add_argument("--patch")
    p = sub.add_parser("series")
    p.add_argument("--out", default=os.path.join(BUILD, "series"))
    p = sub.add_parser("import")
    p.add_argument("rev")
    p = sub.add_parser("steps")
    p.add_argument("--save", action="store_true")
    p.add_argument("path")
    args = ap.parse_args()
    try:
        {"prepare": cmd_prepare, "refresh": cmd_refresh, "series": cmd_series,
         "steps": cmd_steps, "import": cmd_import}[args.cmd](args)
    except TreeError as e:
        die(str(e))


if __name__ == "__main__":
    main()
