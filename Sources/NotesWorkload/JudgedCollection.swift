import Basics
import Glibc

/// A judged test collection: documents, queries, and graded judgments of which documents answer
/// which query; what `notes-bench search --collection DIR` measures relevance on.
///
/// The directory is in the BEIR layout:
/// - `corpus.jsonl`: one JSON object a line, `{"_id": ..., "title": ..., "text": ...}`;
/// - `queries.jsonl`: `{"_id": ..., "text": ...}`;
/// - the judgments: `qrels/test.tsv` (BEIR: `query-id`, `corpus-id`, `score`, tab separated,
///   a header line), or else `qrels.tsv`, `qrels.txt` or `qrels` in either that form or TREC's
///   (`query-id 0 doc-id grade`, white space separated, no header).
///
/// A grade is a gain: 0 (or below, as TREC's -1 and -2) is judged and not relevant.
public struct JudgedCollection: Sendable, Equatable {
    public struct Document: Sendable, Equatable {
        public var id: String
        public var title: String
        public var text: String

        public init(id: String, title: String, text: String) {
            self.id = id
            self.title = title
            self.text = text
        }
    }

    public struct Query: Sendable, Equatable {
        public var id: String
        public var text: String

        public init(id: String, text: String) {
            self.id = id
            self.text = text
        }
    }

    /// A line of a collection's file that cannot be read.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// In file order.
    public var documents: [Document]
    /// Those of the queries file with at least one relevant (gain above 0) document, in file order.
    public var queries: [Query]
    /// Query id -> document id -> gain (0 for judged and not relevant).
    public var judgments: [String: [String: Int]]

    public init(documents: [Document], queries: [Query], judgments: [String: [String: Int]]) {
        self.documents = documents
        self.judgments = judgments
        self.queries = queries.filter { q in judgments[q.id]?.values.contains { $0 > 0 } ?? false }
    }

    /// The names the judgments file may have, in the order they are looked for.
    public static let judgmentFiles = ["qrels/test.tsv", "qrels.tsv", "qrels.txt", "qrels"]

    /// Reads the collection in `directory` (see the type's description).
    public static func read(directory: String) throws -> JudgedCollection {
        func text(_ name: String) throws -> String {
            String(decoding: try readFile(directory + "/" + name, upTo: Int.max - 1), as: UTF8.self)
        }
        func isFile(_ path: String) -> Bool {
            var st = stat()
            return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        }
        guard let qrels = judgmentFiles.first(where: { isFile(directory + "/" + $0) }) else {
            throw Failure("\(directory): no judgments (looked for \(judgmentFiles.joined(separator: ", ")))")
        }
        return try parse(
            corpus: try text("corpus.jsonl"), queries: try text("queries.jsonl"), judgments: try text(qrels),
            names: (directory + "/corpus.jsonl", directory + "/queries.jsonl", directory + "/" + qrels))
    }

    /// The collection from the texts of its three files; `names` are the files' names in errors.
    public static func parse(
        corpus: String, queries: String, judgments: String,
        names: (corpus: String, queries: String, judgments: String) = ("corpus.jsonl", "queries.jsonl", "qrels")
    ) throws -> JudgedCollection {
        var documents: [Document] = []
        try forEachObject(in: corpus, name: names.corpus) { object, place in
            documents.append(
                Document(
                    id: try id(of: object, at: place), title: object["title"]?.stringValue ?? "",
                    text: object["text"]?.stringValue ?? ""))
        }
        var parsedQueries: [Query] = []
        try forEachObject(in: queries, name: names.queries) { object, place in
            parsedQueries.append(Query(id: try id(of: object, at: place), text: object["text"]?.stringValue ?? ""))
        }
        var graded: [String: [String: Int]] = [:]
        for (n, line) in judgments.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }
        ).enumerated() {
            let columns = line.split(whereSeparator: \.isWhitespace)
            if columns.isEmpty { continue }
            let query: Substring
            let document: Substring
            let grade: Substring
            switch columns.count {
            case 3: (query, document, grade) = (columns[0], columns[1], columns[2])
            case 4: (query, document, grade) = (columns[0], columns[2], columns[3])
            default:
                throw Failure(
                    "\(names.judgments):\(n + 1): expected query, document and grade (or TREC's query 0 document grade)"
                )
            }
            guard let gain = Int(grade) else {
                if n == 0 { continue }  // BEIR's header line
                throw Failure("\(names.judgments):\(n + 1): the grade \(grade) is not a whole number")
            }
            graded[String(query), default: [:]][String(document)] = max(0, gain)
        }
        return JudgedCollection(documents: documents, queries: parsedQueries, judgments: graded)
    }

    private static func forEachObject(
        in text: String, name: String, _ body: ([(key: String, value: JSONValue)], String) throws -> Void
    ) throws {
        for (n, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .enumerated()
        where !line.allSatisfy(\.isWhitespace) {
            let place = "\(name):\(n + 1)"
            let value: JSONValue
            do { value = try JSONValue.parse(String(line)) } catch { throw Failure("\(place): \(error)") }
            guard let object = value.objectValue else { throw Failure("\(place): expected a JSON object") }
            try body(object, place)
        }
    }

    private static func id(of object: [(key: String, value: JSONValue)], at place: String) throws -> String {
        switch object.first(where: { $0.key == "_id" })?.value {
        case .string(let s)?: return s
        case .number(let n)?: return n.literal
        default: throw Failure("\(place): no \"_id\"")
        }
    }
}

extension [(key: String, value: JSONValue)] {
    fileprivate subscript(_ key: String) -> JSONValue? { first(where: { $0.key == key })?.value }
}

/// Ranking quality against graded judgments.
public enum Relevance {
    /// nDCG at `depth` of `ranking` (document ids, best first): the discounted cumulative gain
    /// of its first `depth` documents, `gain / log2(rank + 1)` from rank 1, over that of the
    /// best possible ranking of the judged documents (linear gains, as trec_eval's `ndcg_cut`
    /// and BEIR compute it). Unjudged documents gain 0. Nil when no document has a gain.
    public static func ndcg(_ ranking: [String], gains: [String: Int], depth: Int = 10) -> Double? {
        let ideal = discounted(gains.values.filter { $0 > 0 }.sorted(by: >).prefix(depth))
        guard ideal > 0 else { return nil }
        var seen: Set<String> = []
        // A document counted once, at its best rank (a ranking should not repeat one).
        let found = ranking.prefix(depth).map { seen.insert($0).inserted ? gains[$0] ?? 0 : 0 }
        return discounted(found[...]) / ideal
    }

    private static func discounted(_ gains: ArraySlice<Int>) -> Double {
        var sum = 0.0
        for (i, g) in gains.enumerated() where g > 0 { sum += Double(g) / log2(Double(i + 2)) }
        return sum
    }
}
