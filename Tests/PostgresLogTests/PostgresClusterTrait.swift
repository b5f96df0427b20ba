import PostgresFixture
import Testing

extension PostgresCluster {
    /// The cluster of the running suite.
    @TaskLocal static var current: PostgresCluster?
}

/// Starts one cluster around a whole suite and removes it afterwards, passed or failed; tests
/// read it as ``PostgresCluster/current``.
struct PostgresClusterTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try await PostgresCluster.$current.withValue(cluster) { try await function() }
    }
}

extension Trait where Self == PostgresClusterTrait {
    /// Runs the suite against a throwaway PostgreSQL cluster.
    static var postgresCluster: Self { PostgresClusterTrait() }
}

/// Why the PostgreSQL suites are skipped, when they are.
let clusterSkipReason = Comment(rawValue: PostgresCluster.skipReason)
