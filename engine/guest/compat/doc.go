// Package compat owns compat_overlay: the `go build -overlay` files that give
// a GOOS=wasip1 guest what storage libraries need and wasip1 lacks (mmap,
// flock, GOARCH=wasm size constants), and the bridges that make libraries
// written for other platforms (the Antithesis SDK) talk to seedfall.
//
// # Two kinds of shim
//
//   - The generic shim adds Mmap, Munmap, Msync, Mprotect, Madvise, Mlock,
//     Munlock, Flock and their constants to package syscall (in GOROOT) and,
//     when the build uses it, to golang.org/x/sys/unix. It is written against
//     no particular version: a declaration the package already has for wasip1
//     is left out.
//   - A library shim (Shim) replaces or adds files of one module, and is
//     matched to the versions it was written against. A build whose
//     dependency graph holds a shimmed module at a version the shim does not
//     know fails with a message naming the module, the version and what to
//     do; it never builds silently with a shim written for other code.
//
// # Host ABI: module "seedfall"
//
// Every parameter is an i32 except offset (i64); pointers are offsets into
// the guest's memory. Every function returns an i32 WASI errno (0 on
// success, numbering as in engine/errno). Constants have their Linux values:
//
//	PROT_NONE 0, PROT_READ 1, PROT_WRITE 2, PROT_EXEC 4
//	MAP_SHARED 0x1, MAP_PRIVATE 0x2, MAP_FIXED 0x10, MAP_ANON 0x20, MAP_POPULATE 0x8000
//	MS_ASYNC 0x1, MS_INVALIDATE 0x2, MS_SYNC 0x4
//	LOCK_SH 1, LOCK_EX 2, LOCK_NB 4, LOCK_UN 8
//
// mmap(fd, offset i64, length, prot, flags, addr) -> errno
//
//	The guest has allocated length bytes at addr (a Go []byte it keeps alive
//	until munmap; Go's heap does not move). The host fills them with the
//	file's cached content from offset (zeros past the end of the file) and,
//	for MAP_SHARED, registers a mapping of [offset, offset+length) of the
//	file at addr. MAP_PRIVATE is a copy and is not registered. MAP_ANON
//	never reaches the host. A mapping outlives the fd it was made from.
//	Errors: EBADF (fd not open), EACCES (fd not readable, or PROT_WRITE with
//	MAP_SHARED on an fd not open for writing), ENODEV (not a regular file),
//	EINVAL (length 0, offset negative or not a multiple of 4096, neither or
//	both of MAP_SHARED and MAP_PRIVATE), EFAULT (addr+length outside memory).
//
// munmap(addr, length) -> errno
//
//	Ends the mapping that starts at addr. Stores into a writable shared
//	mapping are written back into the page cache first (not made durable).
//	Errors: EINVAL (no mapping starts at addr with that length).
//
// msync(addr, length, flags) -> errno
//
//	Writes stores in [addr, addr+length) of a writable shared mapping back
//	into the page cache; with MS_SYNC the file's data is then made durable
//	as by fdatasync. Errors: EINVAL (bad flags), ENOMEM (range not mapped).
//
// mprotect(addr, length, prot) -> errno
//
//	Changes the protection the host records for the mapping at addr
//	(whether stores into it are tracked). Memory is not protected: wasm
//	cannot fault on a store. Errors: EINVAL, ENOMEM (not mapped), EACCES
//	(PROT_WRITE on a shared mapping of a file not open for writing).
//
// flock(fd, how) -> errno
//
//	BSD flock with Linux semantics, per node: LOCK_SH or LOCK_EX (with
//	LOCK_NB) or LOCK_UN on the open file description fd refers to. A lock
//	that conflicts returns EAGAIN (EWOULDBLOCK) at once, with or without
//	LOCK_NB: the host never blocks, and the guest shim retries a blocking
//	request after a short sleep. Closing the last fd of the description
//	releases its lock; a crash of the node releases all of them.
//	Errors: EBADF, EINVAL (bad how), EAGAIN.
//
// The host keeps a shared mapping coherent with the node's page cache:
// every write, truncate or copy through a file descriptor of any process of
// the node is copied into the mappings that cover it (cost proportional to
// the bytes written), and stores into writable shared mappings are taken
// into the page cache before the file is read, written, synced or mapped
// again, and at munmap, msync and a clean exit. At a crash, dirty pages of
// writable mappings are lost unless mmap_early_writeback keeps them.
package compat
