package record

import "time"

// What a store reports of its persistence, for the operator's dashboard.

// SnapshotInfo describes the newest snapshot.
type SnapshotInfo struct {
	Seq      uint64
	Path     string
	Bytes    int64
	Took     time.Duration
	At       time.Time
	Err      string // of the last failed attempt, if the last attempt failed
	Rebuilt  bool   // the indexes were rebuilt from records at load
	LoadedIn time.Duration
}

// LogStatus describes the write-ahead log: what a restart would replay.
type LogStatus struct {
	InMemory    bool   // no data dir: nothing is logged
	Segments    int    // segment files
	Bytes       int64  // their size
	Seq         uint64 // last applied sequence number
	SnapshotSeq uint64 // sequence number of the newest snapshot; the log holds what follows
}
