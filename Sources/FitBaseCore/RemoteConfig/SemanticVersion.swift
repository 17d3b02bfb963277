import Foundation

/// An app's version as the app states it: `major.minor.patch`, the minor and patch optional (`1.4` is `1.4.0`).
/// Pre-release and build suffixes are not versions FitBase compares: `1.4.0-beta` does not parse.
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    /// A version from its parts.
    public init(_ major: Int, _ minor: Int = 0, _ patch: Int = 0) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Parses `1`, `1.4` or `1.4.2` (each part 0–999999, no leading `+`, sign or space); `nil` otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var numbers: [Int] = []
        for part in parts {
            guard (1...6).contains(part.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(part) else { return nil }
            numbers.append(number)
        }
        self.init(numbers[0], numbers.count > 1 ? numbers[1] : 0, numbers.count > 2 ? numbers[2] : 0)
    }

    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (a: SemanticVersion, b: SemanticVersion) -> Bool {
        (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
    }
}

/// A range of app versions: comparators separated by spaces, all of which must hold (`>=1.4.0 <2.0.0`), each one of
/// `>=`, `>`, `<=`, `<`, `=` (or none: `=`) followed by a ``SemanticVersion``; `^1.4` (same major, at least 1.4) and
/// `~1.4.2` (same major and minor, at least 1.4.2) as in npm.
public struct VersionRange: Sendable, Hashable, CustomStringConvertible {
    /// One comparison a version must pass.
    public struct Comparator: Sendable, Hashable {
        /// How the version compares with ``version``.
        public enum Operation: String, Sendable, CaseIterable {
            case atLeast = ">=", above = ">", atMost = "<=", below = "<", exactly = "="
        }

        public var operation: Operation
        public var version: SemanticVersion

        func admits(_ candidate: SemanticVersion) -> Bool {
            switch operation {
            case .atLeast: candidate >= version
            case .above: candidate > version
            case .atMost: candidate <= version
            case .below: candidate < version
            case .exactly: candidate == version
            }
        }
    }

    /// Every comparator must hold; never empty.
    public let comparators: [Comparator]

    /// Parses the range (see the type); `nil` when any part is not a comparator, or there is none.
    public init?(_ text: String) {
        var comparators: [Comparator] = []
        for part in text.split(separator: " ") {
            var rest = Substring(part)
            if rest.hasPrefix("^") || rest.hasPrefix("~") {
                let caret = rest.hasPrefix("^")
                rest.removeFirst()
                guard let low = SemanticVersion(String(rest)) else { return nil }
                let high = caret ? SemanticVersion(low.major + 1) : SemanticVersion(low.major, low.minor + 1)
                comparators += [Comparator(operation: .atLeast, version: low), Comparator(operation: .below, version: high)]
                continue
            }
            // Longest operator first: `>=` before `>`.
            let operation = [Comparator.Operation.atLeast, .atMost, .above, .below, .exactly].first { rest.hasPrefix($0.rawValue) }
            if let operation { rest.removeFirst(operation.rawValue.count) }
            guard let version = SemanticVersion(String(rest)) else { return nil }
            comparators.append(Comparator(operation: operation ?? .exactly, version: version))
        }
        guard !comparators.isEmpty, comparators.count <= 8 else { return nil }
        self.comparators = comparators
    }

    /// Whether `version` is in the range.
    public func contains(_ version: SemanticVersion) -> Bool {
        comparators.allSatisfy { $0.admits(version) }
    }

    /// The canonical form (`>=1.4.0 <2.0.0`), which parses back to the same range.
    public var description: String {
        comparators.map { "\($0.operation.rawValue)\($0.version)" }.joined(separator: " ")
    }
}
