import Notes

/// English-like text for benchmark workloads: words drawn from a Zipf distribution (s = 1)
/// over a vocabulary of common English words followed by pronounceable made-up words.
///
/// Word frequencies then look like real prose (a few words everywhere, a long tail of rare
/// ones), which is what search postings, tokenizers and line diffs are sensitive to.
///
/// ```swift
/// let text = ZipfText(vocabularySize: 30_000)
/// var rng = WorkloadRandom(seed: 7)
/// print(text.title(using: &rng), text.body(using: &rng))
/// ```
public struct ZipfText: Sendable {
    /// The words, commonest first.
    public let vocabulary: [String]
    /// Cumulative probabilities, one per word; the last is 1.
    private let cumulative: [Double]

    /// The commonest English words, in rough frequency order: the head of the distribution.
    static let common: [String] = [
        "the", "of", "and", "to", "a", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are",
        "with", "as", "i", "his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by",
        "not", "word", "but", "what", "some", "we", "can", "out", "other", "were", "all", "there", "when",
        "up", "use", "your", "how", "said", "an", "each", "she", "which", "do", "their", "time", "if",
        "will", "way", "about", "many", "then", "them", "write", "would", "like", "so", "these", "her",
        "long", "make", "thing", "see", "him", "two", "has", "look", "more", "day", "could", "go", "come",
        "did", "number", "sound", "no", "most", "people", "my", "over", "know", "water", "than", "call",
        "first", "who", "may", "down", "side", "been", "now", "find", "any", "new", "work", "part", "take",
        "get", "place", "made", "live", "where", "after", "back", "little", "only", "round", "man", "year",
        "came", "show", "every", "good", "me", "give", "our", "under", "name", "very", "through", "just",
        "form", "sentence", "great", "think", "say", "help", "low", "line", "differ", "turn", "cause",
        "much", "mean", "before", "move", "right", "boy", "old", "too", "same", "tell", "does", "set",
        "three", "want", "air", "well", "also", "play", "small", "end", "put", "home", "read", "hand",
        "port", "large", "spell", "add", "even", "land", "here", "must", "big", "high", "such", "follow",
        "act", "why", "ask", "men", "change", "went", "light", "kind", "off", "need", "house", "picture",
        "try", "us", "again", "animal", "point", "mother", "world", "near", "build", "self", "earth",
        "father", "head", "stand", "own", "page", "should", "country", "found", "answer", "school", "grow",
        "study", "still", "learn", "plant", "cover", "food", "sun", "four", "between", "state", "keep",
        "eye", "never", "last", "let", "thought", "city", "tree", "cross", "farm", "hard", "start", "might",
        "story", "saw", "far", "sea", "draw", "left", "late", "run", "while", "press", "close", "night",
        "real", "life", "few", "north", "open", "seem", "together", "next", "white", "children", "begin",
        "got", "walk", "example", "ease", "paper", "group", "always", "music", "those", "both", "mark",
        "often", "letter", "until", "mile", "river", "car", "feet", "care", "second", "book", "carry",
        "took", "science", "eat", "room", "friend", "began", "idea", "fish", "mountain", "stop", "once",
        "base", "hear", "horse", "cut", "sure", "watch", "color", "face", "wood", "main", "enough",
        "plain", "girl", "usual", "young", "ready", "above", "ever", "red", "list", "though", "feel",
        "talk", "bird", "soon", "body", "dog", "family", "direct", "pose", "leave", "song", "measure",
        "door", "product", "black", "short", "numeral", "class", "wind", "question", "happen", "complete",
        "ship", "area", "half", "rock", "order", "fire", "south", "problem", "piece", "told", "knew",
        "pass", "since", "top", "whole", "king", "space", "heard", "best", "hour", "better", "true",
        "during", "hundred", "five", "remember", "step", "early", "hold", "west", "ground", "interest",
        "reach", "fast", "verb", "sing", "listen", "six", "table", "travel", "less", "morning", "ten",
        "simple", "several", "vowel", "toward", "war", "lay", "against", "pattern", "slow", "center",
        "love", "person", "money", "serve", "appear", "road", "map", "rain", "rule", "govern", "pull",
        "cold", "notice", "voice", "unit", "power", "town", "fine", "certain", "fly", "fall", "lead",
        "cry", "dark", "machine", "note", "wait", "plan", "figure", "star", "box", "noun", "field", "rest",
        "correct", "able", "pound", "done", "beauty", "drive", "stood", "contain", "front", "teach",
        "week", "final", "gave", "green", "oh", "quick", "develop", "ocean", "warm", "free", "minute",
        "strong", "special", "mind", "behind", "clear", "tail", "produce", "fact", "street", "inch",
        "multiply", "nothing", "course", "stay", "wheel", "full", "force", "blue", "object", "decide",
        "surface", "deep", "moon", "island", "foot", "system", "busy", "test", "record", "boat", "common",
        "gold", "possible", "plane", "stead", "dry", "wonder", "laugh", "thousand", "ago", "ran", "check",
        "game", "shape", "equate", "hot", "miss", "brought", "heat", "snow", "tire", "bring", "yes",
        "distant", "fill", "east", "paint", "language", "among",
    ]

    /// Builds a vocabulary of `vocabularySize` words: the common words, then made-up words of
    /// two or three consonant-vowel syllables (uniquely decodable, so all distinct), skipping
    /// any that happen to be common words.
    public init(vocabularySize: Int = 30_000) {
        let size = max(vocabularySize, 1)
        var words = Array(ZipfText.common.prefix(size))
        var taken = Set(words)
        let consonants = Array("bcdfghjklmnprstvwxyz")
        let vowels = Array("aeiou")
        var syllables: [String] = []
        for c in consonants { for v in vowels { syllables.append(String([c, v])) } }
        var j = 0
        while words.count < size {
            let n = syllables.count
            let word: String
            if j < n * n {
                word = syllables[j / n] + syllables[j % n]
            } else {
                let k = j - n * n
                word = syllables[(k / (n * n)) % n] + syllables[(k / n) % n] + syllables[k % n]
            }
            j += 1
            if taken.insert(word).inserted { words.append(word) }
        }
        vocabulary = words
        var sum = 0.0
        var cdf: [Double] = []
        cdf.reserveCapacity(words.count)
        for rank in 1...words.count {
            sum += 1.0 / Double(rank)
            cdf.append(sum)
        }
        cumulative = cdf.map { $0 / sum }
    }

    /// The rank (0 = commonest) of a word drawn from the Zipf distribution.
    public func rank(using rng: inout WorkloadRandom) -> Int {
        let u = rng.unit()
        var lo = 0
        var hi = cumulative.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if cumulative[mid] > u { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    /// A word drawn from the Zipf distribution.
    public func word(using rng: inout WorkloadRandom) -> String {
        vocabulary[rank(using: &rng)]
    }

    /// A one-line title of 2 to 7 words, first letter capitalized.
    public func title(using rng: inout WorkloadRandom) -> String {
        var s = capitalized(word(using: &rng))
        for _ in 0..<rng.next(in: 1...6) {
            s += " "
            s += word(using: &rng)
        }
        return s
    }

    /// One line of prose: a sentence or two of 4 to 20 words ending with a full stop.
    public func line(using rng: inout WorkloadRandom) -> String {
        let count = rng.next(in: 4...20)
        var s = capitalized(word(using: &rng))
        for i in 1..<count {
            s += rng.chance(0.08) && i < count - 1 ? ", " : " "
            s += word(using: &rng)
        }
        s += "."
        return s
    }

    /// A body of 1 to 8 lines (fewer lines more likely), each ending with a newline.
    public func body(using rng: inout WorkloadRandom) -> String {
        let lines = 1 + min(rng.next(below: 4), rng.next(below: 8))
        var s = ""
        for _ in 0..<lines {
            s += line(using: &rng)
            s += "\n"
        }
        return s
    }

    /// An edit of `body` as a person would make one: replace, insert or delete one line.
    /// Long bodies shrink, so a note edited a thousand times stays a readable size.
    public func edit(_ body: String, using rng: inout WorkloadRandom) -> String {
        var lines = body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let roll = rng.next(below: 10)
        if lines.isEmpty || (roll < 3 && lines.count < 40) {
            lines.insert(line(using: &rng), at: rng.next(below: lines.count + 1))
        } else if roll < 5 || lines.count >= 40, lines.count > 1 {
            lines.remove(at: rng.next(below: lines.count))
        } else {
            lines[rng.next(below: lines.count)] = line(using: &rng)
        }
        return lines.map { $0 + "\n" }.joined()
    }

    private func capitalized(_ word: String) -> String {
        guard let first = word.first else { return word }
        return first.uppercased() + word.dropFirst()
    }
}
