// swift-tools-version:6.0
// The notes store: an event-sourced notes log on LMDB.
//
// Layers (arrows point down only):
//   notes (CLI) -> NotesCLI -> Notes -> EventStore -> LMDB -> CLMDB (liblmdb)
//   notes-sync -> NotesCLI, PostgresLog -> EventStore, CLibPQ (libpq): `notes sync`, run by `notes`
//   notes-bench (Benchmarks/) -> Notes, EventStore, LMDB, CSQLite (peer only), PostgresLog and
//     PostgresFixture (the remote log against a throwaway cluster)
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    // Generic types' metadata through their accessors rather than from mangled names: a
    // mangled name is demangled at its first use in a process, and a type with a conformance
    // requirement (a Dictionary's or a Set's key) then scans every conformance record of the
    // binary (about 45,000 instructions each). Measured on `notes show`: 1.85 M instructions to
    // 1.31 M, `notes --version` 0.49 M to 0.31 M, for a binary 0.4% larger.
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"]),
]

let package = Package(
    name: "notes",
    products: [
        .executable(name: "notes", targets: ["notes"]),
        .executable(name: "notes-bench", targets: ["notes-bench"]),
        .executable(name: "notes-sync", targets: ["notes-sync"]),
        .library(name: "Notes", targets: ["Notes"]),
        .library(name: "EventStore", targets: ["EventStore"]),
        .library(name: "LMDB", targets: ["LMDB"]),
        .library(name: "PostgresLog", targets: ["PostgresLog"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // liblmdb.a, not the shared library: no library for the loader to find and relocate at
        // every start, and profiles that name LMDB's own functions.
        .target(
            name: "LMDB", dependencies: ["CLMDB"], swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-l:liblmdb.a"])]),
        // JSON, RFC 3339 instants, UUID text, files and child processes: what every layer above
        // needs and the toolchain gives only with Foundation.
        .target(name: "Basics", dependencies: ["CIntrinsics"], swiftSettings: strict),
        // The processor's own instructions: CRC-32C (SSE 4.2; the portable code in EventStore runs
        // where it is missing) and a cache prefetch hint.
        .target(name: "CIntrinsics"),
        // SHA-256 from Debian's libcrypto (libssl-dev), linked statically (see EventStore's
        // SHA256.swift for why, and its figures).
        .systemLibrary(name: "CCrypto", providers: [.apt(["libssl-dev"])]),
        .target(
            name: "EventStore", dependencies: ["LMDB", "Basics", "CIntrinsics", "CCrypto"], swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-l:libcrypto.a"])]),
        // libpq, PostgreSQL's client library (libpq-dev), for the remote log of sync.
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        // The remote event log in PostgreSQL, behind EventStore's RemoteEventLog.
        //
        // Linked with the shared libpq, and kept out of the `notes` executable. Debian's libpq.a
        // needs libpgcommon, libpgport, libssl, libcrypto, libgssapi_krb5 and libldap beside it,
        // and Debian ships the last two only as shared libraries (with Kerberos, SASL and GnuTLS
        // behind them), so a static libpq would not spare `notes` the loader's work; the shared
        // libpq loads 21 libraries besides libc on Debian 12, which every start of every command
        // would pay. So only programs that talk to the remote link this target. When `notes sync`
        // arrives it must keep libpq off the start path of the other commands (a separate
        // executable the CLI runs, or dlopen at the sync command), not link this target into
        // `notes`.
        .target(
            name: "PostgresLog", dependencies: ["EventStore", "Basics", "CLibPQ"], swiftSettings: strict,
            linkerSettings: [.linkedLibrary("pq")]),
        // Line diffs, unified diffs and blame: text algorithms that know nothing of notes.
        .target(name: "TextDiff", swiftSettings: strict),
        // Full-text search over LMDB: tokenizer, query language, posting blocks, BM25 with
        // block-max pruning; it indexes a small document type and knows nothing of notes.
        .systemLibrary(name: "CStemmer", providers: [.apt(["libstemmer-dev"])]),
        .target(
            name: "SearchEngine", dependencies: ["LMDB", "Basics", "CStemmer", "CIntrinsics"], swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-l:libstemmer.a"])]),
        .target(
            name: "Notes", dependencies: ["EventStore", "LMDB", "Basics", "TextDiff", "SearchEngine", "CIntrinsics"],
            swiftSettings: strict),
        // YAML's event parser from Debian's libyaml (libyaml-dev), for Markdown front matter;
        // linked statically into NotesInterchange (no shared library to load at each start).
        .systemLibrary(name: "CYAML", providers: [.apt(["libyaml-dev"])]),
        // The interchange formats: JSON Lines export and import, Markdown folders.
        .target(
            name: "NotesInterchange", dependencies: ["Notes", "EventStore", "LMDB", "Basics", "CYAML"],
            swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-Xlinker", "-l:libyaml.a"])]),
        // The converter of the Swift Evolution corpus's edit history (Samples/) into notes.
        .target(
            name: "SwiftEvolutionHistory", dependencies: ["NotesInterchange", "Notes", "EventStore", "LMDB", "Basics"],
            swiftSettings: strict),
        // The benchmarks' and tests' generated notebooks; not a product.
        .target(name: "NotesWorkload", dependencies: ["Notes", "EventStore", "Basics"], swiftSettings: strict),
        .target(
            name: "NotesCLI",
            dependencies: [
                "Notes", "NotesInterchange", "SwiftEvolutionHistory", "EventStore", "LMDB", "Basics", "TextDiff",
                "SearchEngine", "CIntrinsics",
            ],
            swiftSettings: strict),
        // A static executable: the Swift runtime, Dispatch, libstdc++ and glibc inside, nothing
        // for the dynamic loader to load, relocate or look symbols up in at every start. With
        // `-static-stdlib` alone the loader still mapped libstdc++, libm, libgcc_s and libc and
        // resolved about 1,800 symbols against them: 2.2 of the 3.5 million instructions of
        // `notes --version` (callgrind), about half its CPU time. `notes` makes no NSS calls
        // (no getpwuid, no getaddrinfo: the actor is $USER or the uid, and gethostname), which a
        // static glibc could not serve. The link prints one warning from the Swift runtime's own
        // libswiftCore.a (its optional prespecialized-metadata library is found with dlopen,
        // which it never asks for here).
        .executableTarget(
            name: "notes", dependencies: ["NotesCLI"], swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-static-executable"])]
        ),
        // `notes sync` runs it from the directory of `notes`: the same tool with the remote log,
        // linked dynamically with libpq, the Swift runtime inside (`-static-stdlib`): with the
        // runtime's shared libraries the loader resolved every reference to them at each start,
        // and `notes-sync --version` took 13.3-13.6 ms against 10.2-10.7 ms (perf stat, 30 runs
        // each, 2026-12-03); what is left is libpq's 21 libraries, which `notes` never loads.
        .executableTarget(
            name: "notes-sync", dependencies: ["NotesCLI", "PostgresLog", "EventStore"], swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-static-stdlib"])]),
        .systemLibrary(
            name: "CSQLite",
            path: "Benchmarks/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .executableTarget(
            name: "notes-bench",
            dependencies: [
                "Notes", "NotesInterchange", "SwiftEvolutionHistory", "NotesWorkload", "EventStore", "LMDB",
                "SearchEngine", "Basics", "CLMDB", "CSQLite", "PostgresLog", "PostgresFixture",
            ],
            path: "Benchmarks/NotesBenchmarks",
            swiftSettings: strict
        ),
        // The event schema and counting projections of the crash and concurrency tests.
        .target(
            name: "StressFixture", dependencies: ["EventStore", "LMDB"], path: "Tests/Support/StressFixture",
            swiftSettings: strict
        ),
        // A child process for crash and concurrency tests (killed with SIGKILL mid-write).
        .executableTarget(
            name: "notes-stress",
            dependencies: ["EventStore", "LMDB", "StressFixture"],
            path: "Tests/Support/StressTool",
            swiftSettings: strict
        ),
        // Helpers shared by the test targets: a seeded generator and temporary directories.
        .target(
            name: "TestSupport", dependencies: ["Notes", "NotesWorkload", "EventStore", "Basics"],
            path: "Tests/Support/TestSupport",
            swiftSettings: strict),
        .testTarget(name: "BasicsTests", dependencies: ["Basics", "EventStore", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "TextDiffTests", dependencies: ["TextDiff", "TestSupport"], swiftSettings: strict),
        // A throwaway PostgreSQL cluster made with initdb, for the tests and the benchmarks.
        .target(
            name: "PostgresFixture", dependencies: ["PostgresLog", "Basics"], path: "Tests/Support/PostgresFixture",
            swiftSettings: strict),
        // Against a real PostgreSQL: a throwaway cluster made with initdb (see PostgresCluster.swift).
        .testTarget(
            name: "PostgresLogTests",
            dependencies: [
                "PostgresLog", "PostgresFixture", "EventStore", "LMDB", "Basics", "Notes", "NotesInterchange",
                "NotesWorkload", "SearchEngine", "TestSupport",
            ],
            swiftSettings: strict),
        .testTarget(name: "SearchEngineTests", dependencies: ["SearchEngine", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "EventStoreTests",
            dependencies: ["EventStore", "LMDB", "notes-stress", "StressFixture", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "NotesTests",
            dependencies: [
                "Notes", "NotesInterchange", "SwiftEvolutionHistory", "NotesWorkload", "EventStore", "LMDB",
                "SearchEngine", "Basics", "TestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "NotesInterchangeTests",
            dependencies: [
                "NotesInterchange", "SwiftEvolutionHistory", "Notes", "NotesWorkload", "EventStore", "LMDB", "Basics",
                "TestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "NotesCLITests",
            // Not on the `notes` executable: its -static-executable link flag would reach the test
            // bundle. scripts/test.sh builds every product (`swift build --build-tests`) first,
            // and the tests find the binary next to the test runner.
            dependencies: ["NotesCLI", "Notes", "NotesInterchange", "NotesWorkload", "TextDiff", "TestSupport"],
            swiftSettings: strict
        ),
    ]
)
