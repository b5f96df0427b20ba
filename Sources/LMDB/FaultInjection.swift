internal import CLMDB
import Glibc
import Synchronization

/// Test-only faults: the Nth put, commit or map growth of an environment fails with a chosen
/// error, as a full map, a full disk or a failing disk would make it fail.
///
/// A plan is armed for a store directory; every ``Environment`` opened at that path afterwards
/// (in this process) counts its operations against it, and so does one already open there
/// when the plan is armed through ``Environment/injectFault(_:)``. The fault fires once; the
/// operations after it run normally, so a command that restarts (a full map) can succeed.
///
/// ```swift
/// @_spi(FaultInjection) import LMDB
/// FaultInjection.arm(.init(.put, at: 17, failing: .noSpace), at: storePath)
/// defer { FaultInjection.disarm(at: storePath) }
/// ```
///
/// Disarmed, the cost is one nil check per operation.
@_spi(FaultInjection)
public enum FaultInjection {
    /// What kind of operation fails.
    public enum Operation: String, Sendable, CaseIterable {
        /// `mdb_put`, `mdb_cursor_put` and reserved puts.
        case put
        /// `mdb_txn_commit`; the transaction is aborted, as a failed commit leaves it.
        case commit
        /// `mdb_env_set_mapsize` when the map grows.
        case growth
    }

    /// The error the operation fails with.
    public enum Failure: String, Sendable, CaseIterable {
        /// `MDB_MAP_FULL`: the map has no room left.
        case mapFull
        /// `ENOSPC`: the disk is full.
        case noSpace
        /// `EIO`: the disk failed.
        case io

        var code: Int32 {
            switch self {
            case .mapFull: return MDB_MAP_FULL
            case .noSpace: return ENOSPC
            case .io: return EIO
            }
        }
    }

    /// One fault: the `at`th `operation` (counting from 1, from when the plan is armed) fails.
    public struct Plan: Sendable, Equatable, CustomStringConvertible {
        public var operation: Operation
        public var at: Int
        public var failure: Failure

        public init(_ operation: Operation, at: Int, failing failure: Failure) {
            self.operation = operation
            self.at = at
            self.failure = failure
        }

        public var description: String { "\(operation) #\(at) fails with \(failure)" }
    }

    private static let armed = Mutex<[String: FaultCounter]>([:])

    /// Arms `plan` for environments opened at `path` from now on.
    public static func arm(_ plan: Plan, at path: String) {
        armed.withLock { $0[path] = FaultCounter(plan) }
    }

    /// Forgets the plan of `path` (environments already open keep counting theirs).
    public static func disarm(at path: String) {
        _ = armed.withLock { $0.removeValue(forKey: path) }
    }

    /// Whether the plan armed at `path` has fired.
    public static func fired(at path: String) -> Bool {
        armed.withLock { $0[path] }?.fired ?? false
    }

    /// How many operations of each kind the environments at `path` ran since the plan was
    /// armed (arm a plan that never fires, `at: .max`, to count the steps of a command).
    public static func counts(at path: String) -> [Operation: Int] {
        guard let counter = armed.withLock({ $0[path] }) else { return [:] }
        var out: [Operation: Int] = [:]
        for op in Operation.allCases { out[op] = counter.count(of: op) }
        return out
    }

    static func counter(for path: String) -> FaultCounter? {
        armed.withLock { $0[path] }
    }
}

/// Counts operations against one plan and says when the planned one comes.
final class FaultCounter: Sendable {
    let plan: FaultInjection.Plan
    private let puts = Atomic<Int>(0)
    private let commits = Atomic<Int>(0)
    private let growths = Atomic<Int>(0)
    private let hasFired = Atomic<Bool>(false)

    init(_ plan: FaultInjection.Plan) { self.plan = plan }

    var fired: Bool { hasFired.load(ordering: .acquiring) }

    func count(of operation: FaultInjection.Operation) -> Int {
        switch operation {
        case .put: return puts.load(ordering: .relaxed)
        case .commit: return commits.load(ordering: .relaxed)
        case .growth: return growths.load(ordering: .relaxed)
        }
    }

    /// Counts one more `operation`; the error code it must fail with now, or nil.
    func failure(_ operation: FaultInjection.Operation) -> Int32? {
        let n: Int
        switch operation {
        case .put: n = puts.add(1, ordering: .relaxed).newValue
        case .commit: n = commits.add(1, ordering: .relaxed).newValue
        case .growth: n = growths.add(1, ordering: .relaxed).newValue
        }
        guard operation == plan.operation, n == plan.at else { return nil }
        hasFired.store(true, ordering: .releasing)
        return plan.failure.code
    }
}

extension Optional where Wrapped == FaultCounter {
    /// The injected error of `operation`, or nil (always nil without a plan).
    @inline(__always)
    func failure(_ operation: FaultInjection.Operation) -> Int32? {
        guard let counter = self else { return nil }
        return counter.failure(operation)
    }
}

extension Environment {
    /// Arms `plan` for this open environment (and for later opens of its path).
    @_spi(FaultInjection)
    public func injectFault(_ plan: FaultInjection.Plan) {
        FaultInjection.arm(plan, at: path)
        faults.withLock { $0 = FaultInjection.counter(for: path) }
    }

    /// Disarms this environment's plan (and its path's).
    @_spi(FaultInjection)
    public func removeFault() {
        FaultInjection.disarm(at: path)
        faults.withLock { $0 = nil }
    }
}
