import Crypto
import FitBaseCore
import Foundation

/// The chain's rules: `hash = hex(SHA-256(prevHash ‖ canonical JSON of the entry))`, where `prevHash` is the previous
/// entry's hash of the same subject as 64 lower-case hex characters (64 zeros before their first entry) and the
/// canonical JSON is every field but `hash`, keys sorted, no spaces, `at` as integer microseconds since 1970, absent
/// values as `null`. (Entries of earlier versions, one chain for the server, had no `clientRequestId`.)
enum AuditChain {
    static let genesis = String(repeating: "0", count: 64)

    static func hash(of entry: AuditEntry) -> String {
        hash(entry, canonicalJSON(of: entry, clientRequestID: true))
    }

    /// The hash of an entry of the single chain of earlier versions.
    static func legacyHash(of entry: AuditEntry) -> String {
        hash(entry, canonicalJSON(of: entry, clientRequestID: false))
    }

    private static func hash(_ entry: AuditEntry, _ json: Data) -> String {
        var digest = SHA256()
        digest.update(data: Data(entry.prevHash.utf8))
        digest.update(data: json)
        return hex(digest.finalize())
    }

    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        hexString(bytes)
    }

    /// `text` as a JSON string (quote, backslash and control characters escaped), `null` when absent.
    static func jsonString(_ text: String?) -> String {
        guard let text else { return "null" }
        // Nearly always plain ASCII (ids, names of actions, hex): nothing to escape.
        if text.isPlainJSONText { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func canonicalJSON(of entry: AuditEntry, clientRequestID: Bool = true) -> Data {
        let string = jsonString
        var fields: [(String, String)] = [
            ("action", string(entry.action)), ("actorId", string(entry.actorID?.lowercasedString)),
            ("at", String(microseconds(entry.at))), ("count", String(entry.count)), ("outcome", string(entry.outcome)),
            ("prevHash", string(entry.prevHash)), ("requestId", string(entry.requestID)), ("resource", string(entry.resource)),
            ("seq", String(entry.seq)), ("subjectId", string(entry.subjectID.lowercasedString)),
        ]
        if clientRequestID { fields.insert(("clientRequestId", string(entry.clientRequestID)), at: 2) }
        var json = "{"
        json.reserveCapacity(512)
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { json += "," }
            json += "\""
            json += key
            json += "\":"
            json += value
        }
        json += "}"
        return Data(json.utf8)
    }

    /// The canonical JSON of `entry` in three parts around its two chain-dependent values, the previous hash and the
    /// position: `canonicalJSON = before ‖ prevHash ‖ between ‖ decimal(seq) ‖ after` for any previous hash (64 hex
    /// characters) and position. PostgreSQL chains an entry in the statement that claims its position
    /// (``AuditLog``), from these bytes, without the instance knowing the head first. Cut out of ``canonicalJSON(of:clientRequestID:)``
    /// itself, so the two cannot disagree; the keys are found by `,"key":`, which no escaped value contains (every quote
    /// inside a value is escaped).
    static func canonicalJSONParts(of entry: AuditEntry) -> (before: Data, between: Data, after: Data) {
        var template = entry
        template.prevHash = genesis
        template.seq = 0
        let json = Array(canonicalJSON(of: template))
        let prevKey = Array(#","prevHash":""#.utf8)
        let seqKey = Array(#","seq":"#.utf8)
        guard let prev = json.firstRange(of: prevKey), let seq = json[prev.upperBound...].firstRange(of: seqKey) else {
            preconditionFailure("canonical JSON names prevHash before seq")
        }
        let hashEnd = prev.upperBound + genesis.utf8.count
        return (Data(json[..<prev.upperBound]), Data(json[hashEnd..<seq.upperBound]), Data(json[(seq.upperBound + 1)...]))
    }

    static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// Where a chain stops holding.
    struct Break: Sendable, Equatable, CustomStringConvertible {
        /// Whose chain (`nil` for the legacy chain of earlier versions).
        var subject: UUID?
        var seq: Int64
        var reason: String
        var description: String {
            (subject.map { "chain of \($0.uuidString.lowercased()), " } ?? "") + "entry \(seq): \(reason)"
        }
    }

    /// The first broken link of `entries` (one subject's, ascending by seq), which continue after `previous`.
    static func firstBreak(in entries: [AuditEntry], after previous: (seq: Int64, hash: String)) -> Break? {
        var previous = previous
        for entry in entries {
            if entry.seq != previous.seq + 1 {
                return Break(subject: entry.subjectID, seq: entry.seq, reason: "follows entry \(previous.seq): entries \(previous.seq + 1)…\(entry.seq - 1) are missing or out of order")
            }
            if entry.prevHash != previous.hash {
                return Break(subject: entry.subjectID, seq: entry.seq, reason: "prevHash does not match the hash of entry \(previous.seq) (an entry was changed, removed or reordered)")
            }
            if hash(of: entry) != entry.hash {
                return Break(subject: entry.subjectID, seq: entry.seq, reason: "hash does not match its contents (the entry was changed)")
            }
            previous = (entry.seq, entry.hash)
        }
        return nil
    }

    /// The first broken link of the single chain of earlier versions (every subject's entries, by seq from 1).
    static func firstLegacyBreak(in entries: [AuditEntry]) -> Break? {
        var previous: (seq: Int64, hash: String) = (0, genesis)
        for entry in entries {
            guard entry.seq == previous.seq + 1, entry.prevHash == previous.hash, legacyHash(of: entry) == entry.hash else {
                return Break(subject: nil, seq: entry.seq, reason: "the single audit chain of an earlier version is broken here")
            }
            previous = (entry.seq, entry.hash)
        }
        return nil
    }
}
