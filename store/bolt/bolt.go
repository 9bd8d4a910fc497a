// Package bolt is the bbolt-backed memory store: one database file shared by
// the language server, the CLI and agents. The Store never keeps the file
// open between operations: each operation opens it, runs one short
// transaction and closes it, so several processes can take turns writing.
// A writer that cannot get the lock within Options.LockTimeout gets an error
// wrapping store.ErrLocked; an unreadable file is store.ErrCorrupt and is
// never written to.
//
// Before a handle's first write, and again whenever the file changed since
// its last check or commit, the write checks the structure of the whole
// page tree with our own code (checkPages: page ids, flags, counts,
// element bounds, key order, pages within the file, the freelist): damage
// in any page, not only the ones the write touches, makes the write return
// store.ErrCorrupt naming the file and the page, with nothing written.
// Reads do not run this check: they skip undecodable records and report a
// fault on a page they read as store.ErrCorrupt. Promoted, whose matches lie
// on a few pages, reads them with pread instead of mapping the file
// (pageread.go) and leaves anything bigger or unexpected to bbolt.
//
// Export is the salvage path: when the tree of a damaged file cannot be
// walked it scans the file's pages for record values instead.
//
// Layout (schema version 2), one bucket per concern:
//
//	meta        "version" -> uint64
//	records     id -> 8-byte write sequence + record JSON
//	targeted    id -> nil, for records that carry a target
//	tscope      "k=v\x00id" -> nil for every scope pair of a targeted record
//	tkey        target key + id -> nil for every targeted record, the target
//	            key being its seven fields, each length-prefixed, so a Search
//	            for one target reads only the records that carry it
//	promotions  id -> Promotion JSON
//	pscope      "k=v\x00id" -> copy of the records value, for every scope pair
//	            of a promoted record, so Promoted reads its matches from
//	            adjacent keys without touching the records bucket
//	proposals   id -> Proposal JSON
//	ledger      seq -> LedgerEntry JSON (big-endian keys, hash-chained)
//	summaries   seq -> OverlaySummary JSON (bounded retention)
//	ledgerof    id + 0x00 + seq -> nil for every ledger entry about record id
//	            (its record id and the id of the record it carries), so a
//	            record's history is read without scanning the ledger
//
// Version 0 is the pre-release layout: a records bucket holding plain record
// JSON and nothing else. Opening it read-write migrates it in one
// transaction: sequences are assigned in id order, indexes are built and an
// import ledger entry is written per record. Version 1 lacks the tkey
// bucket: it is read as is (Search for a target then reads every targeted
// record), and opening it read-write builds the bucket (migrate1to2).
// Version 2 lacks the ledgerof bucket: read as is (a render then finds a
// record's entries by scanning the ledger), and opening it read-write
// builds it (migrate2to3).
package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Version is the schema version this package writes.
const Version = 3

// minReadVersion is the oldest schema version read without migrating.
const minReadVersion = 1

// DefaultLockTimeout is how long an operation waits for the file lock when
// Options.LockTimeout is zero.
const DefaultLockTimeout = 2 * time.Second

// DefaultRetention is the number of overlay summaries kept when
// Options.SummaryRetention is zero.
const DefaultRetention = 1000

// DefaultPath is the store file relative to the workspace root.
var DefaultPath = filepath.Join(".agent-memory", "memory.db")

// ErrVersion reports a store file written by a newer agent-ls, or an old
// file opened read-only before it was migrated.
var ErrVersion = errors.New("unsupported store version")

var (
	bucketMeta       = []byte("meta")
	bucketRecords    = []byte("records")
	bucketTargeted   = []byte("targeted")
	bucketTScope     = []byte("tscope")
	bucketTKey       = []byte("tkey")
	bucketPromotions = []byte("promotions")
	bucketPScope     = []byte("pscope")
	bucketProposals  = []byte("proposals")
	bucketLedger     = []byte("ledger")
	bucketSummaries  = []byte("summaries")
	bucketLedgerOf   = []byte("ledgerof")

	keyVersion = []byte("version")
	// keyLedgerHead is the meta entry naming the ledger's last entry (its
	// 8-byte sequence number, then its hash): the anchor that lets Verify see
	// entries cut from the end of the chain, which the chain alone cannot.
	keyLedgerHead = []byte("ledgerHead")
	// keyVerifyFailed is the meta entry holding the finding of the last
	// verification that failed (absent when the last one passed): no write
	// lands while it is there (store.VerifyFailedError).
	keyVerifyFailed = []byte("verifyFailed")

	allBuckets = [][]byte{bucketMeta, bucketRecords, bucketTargeted, bucketTScope, bucketTKey, bucketPromotions,
		bucketPScope, bucketProposals, bucketLedger, bucketSummaries, bucketLedgerOf}
)

// Store is a bbolt-backed store.Store. It is safe for concurrent use; within a
// process writers are serialized by a mutex, across processes by the file
// lock.
type Store struct {
	path      string
	opts      store.Options
	now       func() time.Time
	timeout   time.Duration
	retention int
	logger    *slog.Logger

	mu     sync.RWMutex // writers exclusive, readers shared, within this process
	idMu   *sync.Mutex  // shared with the batch views of this store
	ids    *schema.IDGenerator
	closed bool
	// tx is set on the Tx Update hands to its fn (a read-write
	// transaction) and on the Reader View hands to its fn (readTx, a
	// read-only one): every operation runs in it instead of opening the
	// file.
	tx     *bbolt.Tx
	readTx bool
	// cache holds decoded record values and promotion rows (shared with
	// the batch views); head is the last ledger entry a batch view
	// appended in tx.
	cache *decodeCache
	head  *ledgerHead
	// checked is the file as this handle last checked or committed it
	// (checkTree); guarded by mu held for writing.
	checked *fileIdentity
	// chainOK is the file as this handle last verified its ledger chain
	// (checkChainCached) or committed onto it; guarded like checked.
	chainOK *fileIdentity
	// stamp is an Update Tx's ViewStamp; nested counts the Update calls
	// running on it (their commit is the outer one's).
	stamp  store.ViewStamp
	nested atomic.Int32
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Stamper = (*Store)(nil)
)

// Open returns a Store for the database file at path. Unless opts.ReadOnly,
// it creates the file (and its parent directories) if needed and migrates an
// older schema version; a read-write Open of a damaged file (checkPages)
// fails with store.ErrCorrupt. A read-only Store of a missing file reads
// as empty, and one of a damaged file opens so that Export can salvage
// what it can (other operations report store.ErrCorrupt).
//
// The path must name a regular file or nothing: a directory, FIFO, socket
// or device is refused at once (ErrNotRegular). A new store is created
// under a temporary name in the same directory and put in place once
// initialized and synced, so a crash never leaves a partial file; an
// existing 0-byte file holds nothing and is initialized the same way.
func Open(path string, opts store.Options) (*Store, error) {
	return OpenContext(context.Background(), path, opts)
}

// OpenContext is Open bounded by ctx as well as by the lock timeout: a
// cancelled ctx ends a wait for the file lock (store/backend.Open calls it).
func OpenContext(ctx context.Context, path string, opts store.Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{
		path:      abs,
		opts:      opts,
		now:       opts.Now,
		timeout:   opts.LockTimeout,
		retention: opts.SummaryRetention,
		logger:    opts.Logger,
		idMu:      &sync.Mutex{},
		cache:     newDecodeCache(),
		ids:       schema.NewIDGenerator(opts.Entropy),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.timeout <= 0 {
		s.timeout = DefaultLockTimeout
	}
	if s.retention <= 0 {
		s.retention = DefaultRetention
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if opts.ReadOnly {
		// A damaged file still opens read-only so Export can salvage it;
		// each operation reports the damage.
		err := s.viewOpt(ctx, false, func(*bbolt.Tx) error { return nil })
		if err != nil && !errors.Is(err, errNoFile) && !errors.Is(err, store.ErrCorrupt) {
			return nil, err
		}
		return s, nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	// An existing current file needs only a shared-lock look (with the
	// page-tree check: a damaged file does not open for writing, and the
	// handle's first write needs no second check while the file is
	// unchanged); a new or older file gets one write transaction that
	// creates or migrates it.
	exists, empty, err := fileState(abs)
	if err != nil {
		return nil, err
	}
	if exists && !empty {
		err := s.view(ctx, func(tx *bbolt.Tx) error {
			if v, err := readVersion(tx); err == nil && v < Version {
				return errMigrate
			}
			// No one else has s yet, so setting s.checked under the read
			// lock is safe.
			return s.checkTree()
		})
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, ErrVersion) && !errors.Is(err, errMigrate) {
			return nil, err
		}
	}
	if err := s.update(ctx, func(*bbolt.Tx) error { return nil }); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close marks the store closed; the file is not held open between
// operations, so there is nothing else to release.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// errNoFile is returned by view when the file does not exist: reads treat
// the store as empty.
var errNoFile = errors.New("store file does not exist")

// errMigrate tells Open that a readable file is older than Version.
var errMigrate = errors.New("store file needs migrating")

// view runs fn in a read-only transaction on a read-only (shared-lock) open
// of the file.
func (s *Store) view(ctx context.Context, fn func(tx *bbolt.Tx) error) error {
	return s.viewOpt(ctx, true, fn)
}

// readable checks, with s.mu held, that s is open, ctx is live and the file
// holds a store: errNoFile when it does not exist or is empty (a 0-byte
// file is what a crash before the first commit of an older agent-ls left:
// it holds nothing).
func (s *Store) readable(ctx context.Context) error {
	if s.closed {
		return fmt.Errorf("store %s: %w", s.path, store.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if exists, empty, err := fileState(s.path); err != nil {
		return err
	} else if !exists || empty {
		return errNoFile
	}
	return nil
}

// viewOpt is view; checkSize false skips the truncation check so a salvage
// reads what it can.
func (s *Store) viewOpt(ctx context.Context, checkSize bool, fn func(tx *bbolt.Tx) error) error {
	if s.tx != nil {
		return s.inTx(ctx, fn)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.readable(ctx); err != nil {
		return err
	}
	return s.withDB(ctx, true, func(db *bbolt.DB) error {
		return db.View(func(tx *bbolt.Tx) error {
			if checkSize {
				if err := s.checkSize(tx); err != nil {
					return err
				}
			}
			v, err := readVersion(tx)
			if err != nil {
				return err
			}
			if v < minReadVersion || v > Version {
				if v < Version {
					return fmt.Errorf("store %s: %w: schema version %d, open it read-write once to migrate it to %d", s.path, ErrVersion, v, Version)
				}
				return fmt.Errorf("store %s: %w: schema version %d is newer than this agent-ls supports (%d); upgrade agent-ls", s.path, ErrVersion, v, Version)
			}
			if checkSize {
				// The size checked: the mapping covers the transaction.
				defer trimMapping(tx)()
			}
			return fn(tx)
		})
	})
}

// update runs fn in a read-write transaction, creating and migrating the
// schema first when needed.
func (s *Store) update(ctx context.Context, fn func(tx *bbolt.Tx) error) error {
	if s.readTx {
		return fmt.Errorf("store %s: %w: a write in a read-only View", s.path, store.ErrForbidden)
	}
	if s.tx != nil {
		return s.inTx(ctx, fn)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("store %s: %w", s.path, store.ErrClosed)
	}
	if s.opts.ReadOnly {
		return fmt.Errorf("store %s: opened read-only: %w", s.path, store.ErrForbidden)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	if exists, empty, err := fileState(s.path); err != nil {
		return err
	} else if !exists || empty {
		if err := s.create(ctx, exists); err != nil {
			return err
		}
	}
	return s.withDB(ctx, false, func(db *bbolt.DB) error {
		err := db.Update(func(tx *bbolt.Tx) error {
			// Checked before anything is written: a truncated or damaged
			// file is never extended or rewritten.
			if err := s.checkSize(tx); err != nil {
				return err
			}
			if err := s.checkTree(); err != nil {
				return err
			}
			// No write is appended onto a ledger that does not verify.
			if err := s.checkChainCached(tx); err != nil {
				return err
			}
			// No write lands on a store whose last verification failed,
			// but the one that records a verification's outcome.
			if m := tx.Bucket(bucketMeta); m != nil && ctx.Value(markWrite{}) == nil {
				if err := store.CheckVerifyMark(string(m.Get(keyVerifyFailed))); err != nil {
					return fmt.Errorf("store %s: %w", s.path, err)
				}
			}
			if err := s.migrate(tx); err != nil {
				return err
			}
			return fn(tx)
		})
		if err == nil {
			// Still under the writer lock: the file as this commit left
			// it, built on a checked tree and chain, needs no new check.
			s.checked, s.chainOK = nil, nil
			if f, err := os.Open(s.path); err == nil {
				if id, err := identityOf(f); err == nil {
					s.checked, s.chainOK = &id, &id
				}
				_ = f.Close()
			}
		}
		return err
	})
}

// withDB opens the file, runs fn and closes it, mapping lock timeouts to
// store.ErrLocked and unreadable files (including bbolt panics and memory
// faults on corrupt pages) to store.ErrCorrupt.
func (s *Store) withDB(ctx context.Context, readOnly bool, fn func(db *bbolt.DB) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var db *bbolt.DB
	defer func() {
		if r := recover(); r != nil {
			err = s.faultError(r)
			if db != nil {
				func() {
					defer func() { _ = recover() }()
					_ = db.Close()
				}()
			}
		}
	}()
	db, err = bbolt.Open(s.path, 0o600, &bbolt.Options{Timeout: s.timeout, ReadOnly: readOnly,
		OpenFile: opener(ctx, !readOnly, s.timeout)})
	if err != nil {
		db = nil
		return s.openError(err)
	}
	ferr := fn(db)
	cerr := db.Close()
	db = nil
	if ferr != nil {
		return ferr
	}
	if cerr != nil {
		return fmt.Errorf("close store %s: %w", s.path, cerr)
	}
	return nil
}

func (s *Store) openError(err error) error {
	switch {
	case errors.Is(err, ErrNotRegular):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("open store %s: %w", s.path, err)
	case errors.Is(err, berrors.ErrTimeout), errors.Is(err, errLockTimeout):
		return fmt.Errorf("store %s: %w: another agent-ls process holds it; retry in a moment (waited %s)", s.path, store.ErrLocked, s.timeout)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrInvalidMapping):
		return fmt.Errorf("store %s: %w: %v", s.path, store.ErrCorrupt, err)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	// bbolt reports short or mangled files with ad-hoc errors (mmap size,
	// page size); none of them is recoverable by retrying.
	return fmt.Errorf("store %s: %w: %v", s.path, store.ErrCorrupt, err)
}

// checkSize refuses a file shorter than the pages its meta page says it
// has: a truncated file, whose missing pages would fault when read.
func (s *Store) checkSize(tx *bbolt.Tx) error {
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	if need := tx.Size(); fi.Size() < need {
		return s.corrupt("file is truncated: %d bytes, its pages need %d", fi.Size(), need)
	}
	return nil
}

// checkTree runs checkPages on the file; update calls it with the writer
// lock held, before anything is written, so a damaged file is refused
// whichever pages the write would touch, and a read-write Open with the
// shared lock held. The check reads every page in use (27-50 ms for
// bench/gen's 100k-record file), so a handle skips it while the file
// keeps the identity it had after this handle's last check or commit
// (fileIdentity): a commit by any other process or handle changes it and
// the next write checks again.
func (s *Store) checkTree() error {
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	defer f.Close()
	id, err := identityOf(f)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	if s.checked != nil && s.checked.same(id) {
		return nil
	}
	s.checked = nil
	r, unmap := mapFile(f, id.fi.Size())
	defer unmap()
	if err := checkPages(r, id.fi.Size()); err != nil {
		return s.corrupt("%v", err)
	}
	s.checked = &id
	return nil
}

// fileIdentity is what lets checkTree skip a check: the file's device,
// inode, size and modification time, and the first bytes of both meta
// pages, one of which every bbolt commit rewrites (so a commit is seen even
// within the file system's timestamp granularity). A change by something
// other than bbolt, within that granularity and keeping the size and the
// meta pages, goes unseen until the file changes again.
type fileIdentity struct {
	fi   os.FileInfo
	meta [2][pageHeaderSize + metaSize]byte
}

func identityOf(f *os.File) (fileIdentity, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileIdentity{}, err
	}
	id := fileIdentity{fi: fi}
	_, _ = f.ReadAt(id.meta[0][:], 0)
	ps := int64(binary.LittleEndian.Uint32(id.meta[0][metaPageSizeField:]))
	if !validPageSize(ps) {
		ps = int64(os.Getpagesize())
	}
	_, _ = f.ReadAt(id.meta[1][:], ps)
	return id, nil
}

func (a *fileIdentity) same(b fileIdentity) bool {
	return os.SameFile(a.fi, b.fi) && a.fi.Size() == b.fi.Size() && a.fi.ModTime().Equal(b.fi.ModTime()) && a.meta == b.meta
}

// corrupt wraps a decoding problem found inside a transaction.
func (s *Store) corrupt(format string, args ...any) error {
	return fmt.Errorf("store %s: %w: %s", s.path, store.ErrCorrupt, fmt.Sprintf(format, args...))
}

func (s *Store) nowString() string { return schema.FormatTime(s.now()) }

// newID mints an id; the generator is not safe for concurrent use.
func (s *Store) newID(t time.Time) (string, error) {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	return s.ids.New(t)
}

// View runs fn with a Reader on one read-only transaction
// (store.Store.View): one file open under a shared lock, every read of fn
// on the same snapshot. A store whose file does not exist yet reads as
// empty.
func (s *Store) View(ctx context.Context, fn func(tx store.Reader) error) error {
	if s.tx != nil || s.readTx {
		return fn(s)
	}
	var panicked any
	ran := false
	err := s.view(ctx, func(tx *bbolt.Tx) (err error) {
		ran = true
		child := &Store{path: s.path, opts: s.opts, now: s.now, timeout: s.timeout, retention: s.retention,
			logger: s.logger, idMu: s.idMu, ids: s.ids, tx: tx, readTx: true, cache: s.cache}
		defer child.Close()
		defer func() {
			if r := recover(); r != nil {
				panicked, err = r, errBatchPanic
			}
		}()
		return fn(child)
	})
	if panicked != nil {
		panic(panicked)
	}
	if errors.Is(err, errNoFile) && !ran {
		// Nothing to hold a snapshot of: each read of this Reader finds
		// no file and answers as an empty store does.
		child := &Store{path: s.path, opts: s.opts, now: s.now, timeout: s.timeout, retention: s.retention,
			logger: s.logger, idMu: s.idMu, ids: s.ids, readTx: true, cache: s.cache}
		defer child.Close()
		return fn(child)
	}
	return err
}

// Update runs fn with a Tx whose every operation runs in one read-write
// transaction (store.Tx.Update): one file open, one commit and fsync for
// the whole transaction. The file's writer lock is held while fn runs.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if s.readTx {
		return fmt.Errorf("store %s: %w: Update in a read-only View", s.path, store.ErrForbidden)
	}
	if s.tx != nil {
		s.nested.Add(1)
		defer s.nested.Add(-1)
		return fn(s)
	}
	// A panic in fn rolls the transaction back and goes on as fn's panic
	// (withDB would report it as a corrupt file).
	var panicked any
	err := s.update(ctx, func(tx *bbolt.Tx) (err error) {
		child := &Store{path: s.path, opts: s.opts, now: s.now, timeout: s.timeout, retention: s.retention,
			logger: s.logger, idMu: s.idMu, ids: s.ids, tx: tx, cache: s.cache}
		// update ran checkTree under the writer lock: s.checked is the
		// file this transaction works on.
		key := ""
		if s.checked != nil {
			key = fileKey(s.checked.fi)
		}
		child.stamp = store.ViewStamp{Base: txStamp(key, tx.ID()-1), Next: txStamp(key, tx.ID()), Now: s.now}
		defer child.Close()
		defer func() {
			if r := recover(); r != nil {
				panicked, err = r, errBatchPanic
			}
		}()
		g := &store.TxGuard{Tx: child}
		if err := fn(g); err != nil {
			return err
		}
		return g.Failed()
	})
	if panicked != nil {
		panic(panicked)
	}
	return err
}

// txStamp is the stamp of the file named key as bbolt transaction txid
// committed it: every read-write commit increments the meta page's txid.
func txStamp(key string, txid int) string { return key + "/" + strconv.Itoa(txid) }

// ViewStamp implements store.Stamper for the Tx Update hands to its fn:
// the stamps are the file's device and inode with bbolt's transaction id
// before and after its commit. ok is false on the Store itself, on a View's
// Reader and inside a nested Update.
func (s *Store) ViewStamp() (store.ViewStamp, bool) {
	if s.tx == nil || s.readTx || s.nested.Load() > 0 {
		return store.ViewStamp{}, false
	}
	return s.stamp, true
}

// errBatchPanic rolls back a transaction whose fn panicked.
var errBatchPanic = errors.New("transaction function panicked")

// inTx runs fn in the View's or Update's transaction. The transaction is not safe for
// concurrent use, so operations of one batch run one at a time.
func (s *Store) inTx(ctx context.Context, fn func(tx *bbolt.Tx) error) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("store %s: transaction ended: %w", s.path, store.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// bbolt's panics and memory faults on damaged pages are this
	// operation's ErrCorrupt, as withDB makes them for one outside a
	// transaction, whichever goroutine of the View's or Update's fn asks:
	// only a panic of fn itself goes on to its caller.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = s.faultError(r)
		}
	}()
	return fn(s.tx)
}
