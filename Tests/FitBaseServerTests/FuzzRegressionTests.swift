import FitBaseAPI
import Foundation
import Testing

@testable import FitBaseServer

/// Every input kept for a fuzz target (`Fuzz/<target>/corpus/` seeds, and `Fuzz/<target>/regressions/`: what made a
/// target crash once) replayed through the parser entry the target calls, with the target's own checks: each gives a
/// value or a refusal, never a trap. A target is one test here: a replay of its folder with one closure.
@Suite struct FuzzRegressionTests {
    /// The repository's root: three folders up from this file (`Tests/FitBaseServerTests/`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Each file kept for `target`, by its path from the repository's root, with its bytes.
    static func inputs(of target: String) throws -> [(name: String, bytes: [UInt8])] {
        var inputs: [(name: String, bytes: [UInt8])] = []
        for folder in ["corpus", "regressions"] {
            let directory = root.appendingPathComponent("Fuzz/\(target)/\(folder)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.sorted() {
                let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
                inputs.append(("Fuzz/\(target)/\(folder)/\(name)", Array(bytes)))
            }
        }
        return inputs
    }

    /// Hands each input kept for `target` to `check`, which reads it as the target does and expects what it expects;
    /// a target with no input kept fails (a renamed folder would otherwise test nothing).
    static func replay(_ target: String, _ check: (_ name: String, _ bytes: [UInt8]) throws -> Void) throws {
        let inputs = try inputs(of: target)
        #expect(!inputs.isEmpty, "no corpus nor regression kept under Fuzz/\(target)")
        for (name, bytes) in inputs { try check(name, bytes) }
    }

    @Test func rangeHeaders() throws {
        try Self.replay("Range") { name, bytes in
            guard let range = MediaByteRange(header: String(decoding: bytes, as: UTF8.self)) else { return }
            #expect(MediaByteRange(header: range.headerValue) == range, "\(name)")
            for size: Int64 in [0, 1, 2, 1 << 20, .max] {
                guard let resolved = range.resolved(size: size) else { continue }
                #expect(resolved.lowerBound >= 0 && resolved.upperBound < size, "\(name): \(resolved) of \(size) bytes")
            }
        }
    }

    @Test func mediaLinkTokens() throws {
        try Self.replay("MediaLink") { name, bytes in
            let token = String(decoding: bytes, as: UTF8.self)
            guard let parts = MediaLinkToken(token[...]) else { return }
            let digits = String(decoding: parts.signed[(parts.keyLength + 1)...], as: UTF8.self)
            let written = Data(parts.keyBytes).base64URLEncoded + "." + digits + "."
                + Data(parts.signature).base64URLEncoded
            #expect(written == token.filter { $0 != "=" }, "\(name)")
            if let key = MediaKey(bytes: Array(parts.keyBytes)) { #expect(MediaKey(key.path) == key, "\(name)") }
        }
    }

    @Test func pageCursors() throws {
        try Self.replay("PageCursor") { name, bytes in
            let cursor = String(decoding: bytes, as: UTF8.self)
            if let decoded = Base64URL.decode(cursor.utf8) {
                #expect(Data(decoded).base64URLEncoded == cursor.filter { $0 != "=" }, "\(name)")
            }
            for prefix in ["offset:", "seq:"] {
                guard let number = PageCursor.number(in: cursor, after: prefix) else { continue }
                #expect((0...PageCursor.maximumPosition).contains(number), "\(name)")
            }
        }
    }

    @Test func jsonBodies() throws {
        try Self.replay("JSON") { name, bytes in
            if let value = bytes.withUnsafeBytes({ JSONValue.parse($0) }) {
                var written: [UInt8] = []
                value.write(into: &written)
                #expect(written.withUnsafeBytes { JSONValue.parse($0) } == value, "\(name)")
            }
            _ = try? RecordJSON(json: Data(bytes))
        }
    }

    @Test func s3Answers() throws {
        try Self.replay("S3XML") { name, bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(S3XML.listPage(text).objects.allSatisfy { $0.size >= 0 }, "\(name)")
            _ = S3XML.values(of: "UploadId", in: text)
            let wrapped = "<Contents><Key>" + S3XML.escape(text) + "</Key></Contents>"
            let keys = S3XML.elements(of: "Contents", in: wrapped).flatMap { S3XML.values(of: "Key", in: $0) }
            #expect(keys == [text], "\(name)")
        }
    }
}
