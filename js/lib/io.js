"use strict";
// File-system helpers shared by the `lightembed` command and the Node API: errors worded as the
// native CLI words them (Rust's io::Error text), and the folder walk of `lightembed index`/`site`.

const fs = require("node:fs");
const path = require("node:path");

/** An error whose message is shown as is (`error: MESSAGE`, exit `code`). */
class LightembedError extends Error {
  constructor(message, code = 1) {
    super(message);
    this.name = "LightembedError";
    this.exitCode = code;
  }
}

// errno → Rust's `io::Error` Display ("No such file or directory (os error 2)").
const STRERROR = {
  EPERM: [1, "Operation not permitted"],
  ENOENT: [2, "No such file or directory"],
  EIO: [5, "Input/output error"],
  EACCES: [13, "Permission denied"],
  EEXIST: [17, "File exists"],
  ENOTDIR: [20, "Not a directory"],
  EISDIR: [21, "Is a directory"],
  EINVAL: [22, "Invalid argument"],
  EMFILE: [24, "Too many open files"],
  ENOSPC: [28, "No space left on device"],
  EROFS: [30, "Read-only file system"],
  ENAMETOOLONG: [36, "File name too long"],
  ENOTEMPTY: [39, "Directory not empty"],
  ELOOP: [40, "Too many levels of symbolic links"],
};

/** A Node fs error as Rust prints an io::Error. */
function ioMessage(err) {
  const known = err && STRERROR[err.code];
  if (known) return `${known[1]} (os error ${known[0]})`;
  return err && err.message ? err.message : String(err);
}

/** `a` joined with `b` as Rust's `Path::join` shows it (no normalisation of `a`). */
function joinPath(a, b) {
  if (a === "" || a.endsWith("/")) return a + b;
  return `${a}/${b}`;
}

/** Compares two names by their UTF-8 bytes (walkdir's `sort_by_file_name` order). */
function byBytes(a, b) {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/**
 * Every file under `dir`, depth first in sorted order (by name, byte order), following links,
 * skipping hidden entries (`.git/`, `.cache`), as `lightembed`'s walk does. Calls
 * `onFile(fullPath, rel)` for files (`rel` `/`-separated) and `onError(fullPath, err, isLink)`
 * for entries that cannot be read (a dangling link, a loop, no permission).
 */
function walk(dir, onFile, onError) {
  const ancestors = [];
  const visit = (full, rel) => {
    let real;
    try {
      real = fs.realpathSync(full);
    } catch (err) {
      onError(full, err);
      return;
    }
    const loop = ancestors.find((a) => a.real === real);
    if (loop) {
      onError(full, { message: `File system loop found: ${full} points to an ancestor ${loop.full}` });
      return;
    }
    let names;
    try {
      names = fs.readdirSync(full);
    } catch (err) {
      onError(full, err);
      return;
    }
    ancestors.push({ real, full });
    names.sort(byBytes);
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const child = joinPath(full, name);
      const childRel = rel === "" ? name : `${rel}/${name}`;
      let st;
      try {
        st = fs.statSync(child);
      } catch (err) {
        let isLink = false;
        try {
          isLink = fs.lstatSync(child).isSymbolicLink();
        } catch {}
        onError(child, err, isLink);
        continue;
      }
      if (st.isDirectory()) visit(child, childRel);
      else if (st.isFile()) onFile(child, childRel);
    }
    ancestors.pop();
  };
  visit(dir, "");
}

/** Writes one line to stderr, ignoring a closed stderr (losing a message never loses work). */
function warn(line) {
  try {
    fs.writeSync(2, line + "\n");
  } catch {}
}

module.exports = { LightembedError, ioMessage, joinPath, walk, warn, byBytes };
