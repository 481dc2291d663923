// Package doclinks checks Sift's prose, not its code; it builds nothing
// into the binary. Its tests read the module's Markdown — README.md and
// every file under docs/ — and fail when a relative link names a file
// that does not exist or an anchor that no heading (by GitHub's rule) or
// explicit id of the target defines; links inside code are not links.
// They also run .githooks/commit-msg, which refuses commit subjects over
// 72 characters, on subjects at and past the limit.
package doclinks
