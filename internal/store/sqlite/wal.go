package sqlite

import (
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The writer's log, written in a few system calls a commit (D30).
//
// SQLite writes each frame of the write-ahead log with two pwrite calls,
// its 24-byte header and its page, so a commit that changed 150 pages
// (a payout batch over 100 faucets) makes 300 of them before its sync. A
// pwrite costs about 6 µs here whatever its size, most of it the file's
// metadata (its times, the journal of the filesystem): one pwrite of the
// 300 writes' bytes would cost less than two of them.
//
// The VFS registered as walVFSName is the default one ("unix" on Linux)
// with one change: a log file opened through it holds the bytes written to
// it while they follow one another, and writes them together (in calls of
// under 128 KiB, walWriteMax) before any other use of the file: a sync, a
// read, a truncation, its size, a file control, its close, or a write
// elsewhere in the file. The sync that ends a commit (synchronous=FULL)
// therefore writes the commit's frames in a few calls and then syncs
// them, as before: nothing is acknowledged before it is on disk, and the
// order of the file's contents is the order of the writes.
//
// Only the writer opens the database through it, and only with
// synchronous=FULL (Open; TestWriterSyncsEveryCommit): with a commit that
// does not sync, SQLite would publish frames to other connections (the
// wal-index) while they were still held here. Every other file (the
// database and its wal-index, temporary files) is the default VFS's own:
// walOpen opens it in the memory SQLite gave, with the default methods,
// so that SQLite calls them directly.

// walVFSName is the name the VFS is registered under (the vfs parameter of
// the writer's DSN).
const walVFSName = "drip-wal"

// walBufferSize is the most a log file holds before it writes: more than
// the largest payout batch's frames (about 300 pages of 4 KiB); a larger
// transaction writes every walBufferSize.
const walBufferSize = 1 << 20

// walWriteMax is the most the default VFS writes in one call: its
// seekAndWriteFd keeps the low 17 bits of the count, so that a write of
// 128 KiB writes nothing (and fails as a full disk).
const walWriteMax = 1<<17 - 1

// walFile is the start of a log file opened through the VFS, in the memory
// SQLite gives xOpen; the default VFS's file follows it (walSub).
type walFile struct {
	base sqlite3.Tsqlite3_file // pMethods: walMethods
	buf  uintptr               // walBufferSize bytes of C memory, or 0 until the first write
	off  int64                 // the file offset of buf's first byte
	n    int64                 // bytes held: buf[:n], for the file's [off, off+n)
}

const walFileSize = int32(unsafe.Sizeof(walFile{}))

// The VFS, its methods and the buffers are C memory (libc's), as SQLite's
// own objects are: SQLite does arithmetic on the addresses it is given,
// which Go's checks (-race) refuse on Go memory.
var (
	registerWAL sync.Once
	errWAL      error
	baseVFS     uintptr // the default VFS, which ours wraps
	walMethods  uintptr // a log file's methods (iVersion 1: no wal-index, no memory map)
)

// ensureWALVFS registers the VFS once.
func ensureWALVFS() error {
	registerWAL.Do(func() { errWAL = registerWALVFS() })
	return errWAL
}

func registerWALVFS() error {
	tls := libc.NewTLS()
	defer tls.Close()
	baseVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
	if baseVFS == 0 {
		return fmt.Errorf("sqlite: no default VFS")
	}
	name, err := libc.CString(walVFSName)
	if err != nil {
		return err
	}
	// Neither is ever freed: SQLite may use a VFS until the process ends.
	p := cmalloc(tls, libc.Xmalloc, unsafe.Sizeof(sqlite3.Tsqlite3_vfs{}))
	walMethods = cmalloc(tls, libc.Xmalloc, unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{}))
	if p == 0 || walMethods == 0 {
		return fmt.Errorf("sqlite: register VFS %s: out of memory", walVFSName)
	}

	vfs := (*sqlite3.Tsqlite3_vfs)(ptr(p))
	*vfs = *(*sqlite3.Tsqlite3_vfs)(ptr(baseVFS))
	vfs.FpNext = 0
	vfs.FszOsFile += walFileSize
	vfs.FzName = name
	setCFunc(&vfs.FxOpen, walOpen)

	m := (*sqlite3.Tsqlite3_io_methods)(ptr(walMethods))
	*m = sqlite3.Tsqlite3_io_methods{FiVersion: 1}
	setCFunc(&m.FxClose, walClose)
	setCFunc(&m.FxRead, walRead)
	setCFunc(&m.FxWrite, walWrite)
	setCFunc(&m.FxTruncate, walTruncate)
	setCFunc(&m.FxSync, walSync)
	setCFunc(&m.FxFileSize, walFileSizeOf)
	setCFunc(&m.FxLock, walLock)
	setCFunc(&m.FxUnlock, walUnlock)
	setCFunc(&m.FxCheckReservedLock, walCheckReservedLock)
	setCFunc(&m.FxFileControl, walFileControl)
	setCFunc(&m.FxSectorSize, walSectorSize)
	setCFunc(&m.FxDeviceCharacteristics, walDeviceCharacteristics)

	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlite: register VFS %s: code %d", walVFSName, rc)
	}
	return nil
}

// cmalloc is libc's malloc of n bytes, whatever the platform's size_t
// (malloc is passed in for its type).
func cmalloc[T ~uint32 | ~uint64](tls *libc.TLS, malloc func(*libc.TLS, T) uintptr, n uintptr) uintptr {
	return malloc(tls, T(n))
}

// cfunc is the Go func stored at p, a function pointer field of one of
// SQLite's objects (modernc.org/sqlite stores a Go func value there).
func cfunc[F any](p *uintptr) F { return *(*F)(unsafe.Pointer(p)) }

// setCFunc stores f at p, as cfunc reads it.
func setCFunc[F any](p *uintptr, f F) { *(*F)(unsafe.Pointer(p)) = f }

// ptr turns an address of C memory into a pointer, without the
// conversion that go vet cannot tell from a misuse.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func walOf(pFile uintptr) *walFile { return (*walFile)(ptr(pFile)) }

// walSub is the default VFS's file behind the log file pFile.
func walSub(pFile uintptr) uintptr { return pFile + uintptr(walFileSize) }

// subMethods is the default VFS's methods of its file sub.
func subMethods(sub uintptr) *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(ptr((*sqlite3.Tsqlite3_file)(ptr(sub)).FpMethods))
}

// walOpen opens a log file with walMethods before the default VFS's file;
// every other file is the default VFS's alone, at pFile.
func walOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	open := cfunc[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32](&(*sqlite3.Tsqlite3_vfs)(ptr(baseVFS)).FxOpen)
	if flags&sqlite3.SQLITE_OPEN_WAL == 0 {
		return open(tls, baseVFS, zName, pFile, flags, pOutFlags)
	}
	w := walOf(pFile)
	*w = walFile{}
	if rc := open(tls, baseVFS, zName, walSub(pFile), flags, pOutFlags); rc != sqlite3.SQLITE_OK {
		return rc // w.base.pMethods stays 0: SQLite will not close it
	}
	w.base.FpMethods = walMethods
	return sqlite3.SQLITE_OK
}

// walFlush writes what the log file pFile holds and empties it (also when
// a write fails: SQLite answers a failed write by abandoning the
// transaction, whose frames a later one writes again).
func walFlush(tls *libc.TLS, pFile uintptr) int32 {
	w := walOf(pFile)
	n := w.n
	w.n = 0
	for done := int64(0); done < n; {
		chunk := min(n-done, walWriteMax)
		if rc := subWrite(tls, walSub(pFile), w.buf+uintptr(done), int32(chunk), w.off+done); rc != sqlite3.SQLITE_OK {
			return rc
		}
		done += chunk
	}
	return sqlite3.SQLITE_OK
}

// subWrite is the default VFS's write to its file sub.
func subWrite(tls *libc.TLS, sub, p uintptr, n int32, off int64) int32 {
	return cfunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](&subMethods(sub).FxWrite)(tls, sub, p, n, off)
}

// walWrite holds the bytes of a write that follows what the log file
// pFile holds, and writes what it holds first otherwise.
func walWrite(tls *libc.TLS, pFile, pBuf uintptr, amt int32, off int64) int32 {
	w := walOf(pFile)
	if w.n > 0 && (off != w.off+w.n || w.n+int64(amt) > walBufferSize) {
		if rc := walFlush(tls, pFile); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if int64(amt) > walBufferSize { // not a frame: SQLite writes a page at most
		return subWrite(tls, walSub(pFile), pBuf, amt, off)
	}
	if w.buf == 0 {
		if w.buf = cmalloc(tls, libc.Xmalloc, walBufferSize); w.buf == 0 {
			return sqlite3.SQLITE_IOERR_NOMEM
		}
	}
	if w.n == 0 {
		w.off = off
	}
	copy(unsafe.Slice((*byte)(ptr(w.buf+uintptr(w.n))), amt), unsafe.Slice((*byte)(ptr(pBuf)), amt))
	w.n += int64(amt)
	return sqlite3.SQLITE_OK
}

func walClose(tls *libc.TLS, pFile uintptr) int32 {
	rc := walFlush(tls, pFile)
	sub := walSub(pFile)
	closeRC := cfunc[func(*libc.TLS, uintptr) int32](&subMethods(sub).FxClose)(tls, sub)
	w := walOf(pFile)
	if w.buf != 0 {
		libc.Xfree(tls, w.buf)
		w.buf = 0
	}
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return closeRC
}

func walRead(tls *libc.TLS, pFile, pBuf uintptr, amt int32, off int64) int32 {
	if rc := walFlush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](&subMethods(sub).FxRead)(tls, sub, pBuf, amt, off)
}

func walTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	if rc := walFlush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr, int64) int32](&subMethods(sub).FxTruncate)(tls, sub, size)
}

func walSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	if rc := walFlush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr, int32) int32](&subMethods(sub).FxSync)(tls, sub, flags)
}

func walFileSizeOf(tls *libc.TLS, pFile, pSize uintptr) int32 {
	if rc := walFlush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr, uintptr) int32](&subMethods(sub).FxFileSize)(tls, sub, pSize)
}

func walFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	if rc := walFlush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr, int32, uintptr) int32](&subMethods(sub).FxFileControl)(tls, sub, op, pArg)
}

// The log's locks and properties are the default VFS's.

func walLock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr, int32) int32](&subMethods(sub).FxLock)(tls, sub, lock)
}

func walUnlock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr, int32) int32](&subMethods(sub).FxUnlock)(tls, sub, lock)
}

func walCheckReservedLock(tls *libc.TLS, pFile, pResOut uintptr) int32 {
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr, uintptr) int32](&subMethods(sub).FxCheckReservedLock)(tls, sub, pResOut)
}

func walSectorSize(tls *libc.TLS, pFile uintptr) int32 {
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr) int32](&subMethods(sub).FxSectorSize)(tls, sub)
}

func walDeviceCharacteristics(tls *libc.TLS, pFile uintptr) int32 {
	sub := walSub(pFile)
	return cfunc[func(*libc.TLS, uintptr) int32](&subMethods(sub).FxDeviceCharacteristics)(tls, sub)
}
