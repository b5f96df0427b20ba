import Glibc
import NotesWorkload
import TestSupport
import Testing

/// The judged collections of `notes-bench search --collection` and the nDCG computed on them.
@Suite("Judged collection")
struct JudgedCollectionTests {
    static let corpus = """
        {"_id": "d1", "title": "Wing flutter", "text": "flutter of a swept wing"}
        {"_id": "d2", "title": "", "text": "heat transfer in \\"slip\\" flow"}

        {"_id": 3, "text": "no title at all"}
        """
    static let queries = """
        {"_id": "q1", "text": "what causes wing flutter ?"}
        {"_id": "q2", "text": "slip flow heat transfer"}
        {"_id": "q3", "text": "judged, but nothing relevant"}
        {"_id": "q4", "text": "not judged at all"}
        """

    @Test("reads the BEIR layout: header line, tab-separated grades, queries without a relevant document left out")
    func beir() throws {
        let qrels = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\t3\t0\nq2\td2\t1\nq3\td1\t0\n"
        let c = try JudgedCollection.parse(corpus: Self.corpus, queries: Self.queries, judgments: qrels)
        #expect(
            c.documents == [
                .init(id: "d1", title: "Wing flutter", text: "flutter of a swept wing"),
                .init(id: "d2", title: "", text: "heat transfer in \"slip\" flow"),
                .init(id: "3", title: "", text: "no title at all"),
            ])
        #expect(c.queries.map(\.id) == ["q1", "q2"])
        #expect(c.queries[0].text == "what causes wing flutter ?")
        #expect(c.judgments == ["q1": ["d1": 2, "3": 0], "q2": ["d2": 1], "q3": ["d1": 0]])
    }

    @Test("reads TREC qrels (query 0 document grade); a negative grade is judged and not relevant")
    func trec() throws {
        let qrels = "q1 0 d1 3\nq1 0 d2 -1\r\n\nq2 Q0 d2 1\n"
        let c = try JudgedCollection.parse(corpus: Self.corpus, queries: Self.queries, judgments: qrels)
        #expect(c.judgments == ["q1": ["d1": 3, "d2": 0], "q2": ["d2": 1]])
        #expect(c.queries.map(\.id) == ["q1", "q2"])
    }

    @Test("names the file and line of what it cannot read")
    func errors() {
        func failure(corpus: String = Self.corpus, judgments: String = "q1\td1\t1\n") -> String? {
            do {
                _ = try JudgedCollection.parse(corpus: corpus, queries: Self.queries, judgments: judgments)
                return nil
            } catch { return "\(error)" }
        }
        #expect(failure(corpus: "{\"_id\": \"a\"}\n{\"title\": \"x\"}") == "corpus.jsonl:2: no \"_id\"")
        #expect(failure(corpus: "[1]") == "corpus.jsonl:1: expected a JSON object")
        #expect(failure(corpus: "{\"_id\": ") != nil)
        #expect(failure(judgments: "q1\td1\t1\nq1\td2\thigh\n") == "qrels:2: the grade high is not a whole number")
        #expect(failure(judgments: "q1 d1\n")?.hasPrefix("qrels:1: expected query, document and grade") == true)
    }

    @Test("reads a directory: qrels/test.tsv first, else a qrels file beside the corpus")
    func directory() throws {
        let dir = TemporaryDirectory("judged-tests")
        func write(_ name: String, _ text: String) {
            let f = fopen(dir.child(name), "w")!
            fputs(text, f)
            fclose(f)
        }
        write("corpus.jsonl", Self.corpus)
        write("queries.jsonl", Self.queries)
        #expect(throws: JudgedCollection.Failure.self) { try JudgedCollection.read(directory: dir.path) }
        write("qrels", "q2 0 d2 2\n")
        #expect(try JudgedCollection.read(directory: dir.path).judgments == ["q2": ["d2": 2]])
        _ = rename(dir.child("qrels"), dir.child("qrels.txt"))
        mkdir(dir.child("qrels"), 0o700)
        write("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
        let c = try JudgedCollection.read(directory: dir.path)
        #expect(c.judgments == ["q1": ["d1": 1]])
        #expect(c.documents.count == 3)
    }

    @Test("nDCG: linear gains, log2 discounts from rank 1, over the ideal ranking of the judged documents")
    func ndcg() throws {
        let gains = ["a": 3, "b": 2, "c": 0, "d": 1]
        // The ideal order: 3, 2, 1.
        let ideal = 3 + 2 / log2(3.0) + 1 / 2.0
        #expect(Relevance.ndcg(["a", "b", "d"], gains: gains) == 1)
        #expect(Relevance.ndcg(["a", "b", "d", "c", "x"], gains: gains) == 1)
        let swapped = try #require(Relevance.ndcg(["b", "a"], gains: gains))
        #expect(abs(swapped - (2 + 3 / log2(3.0)) / ideal) < 1e-12)
        // Unjudged and not relevant documents gain nothing; nothing found is 0.
        let late = try #require(Relevance.ndcg(["x", "c", "a"], gains: gains))
        #expect(abs(late - (3 / 2.0) / ideal) < 1e-12)
        #expect(Relevance.ndcg([], gains: gains) == 0)
        // Only the first `depth` count, on both sides; a repeated document counts once.
        let cut = try #require(Relevance.ndcg(["x", "a", "b"], gains: gains, depth: 2))
        #expect(abs(cut - (3 / log2(3.0)) / (3 + 2 / log2(3.0))) < 1e-12)
        let twice = try #require(Relevance.ndcg(["a", "a"], gains: gains))
        #expect(abs(twice - 3 / ideal) < 1e-12)
        // No relevant document: no figure.
        #expect(Relevance.ndcg(["a"], gains: ["a": 0]) == nil)
        #expect(Relevance.ndcg(["a"], gains: [:]) == nil)
    }
}
