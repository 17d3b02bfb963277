import FitBaseAPI
import FitBaseCore
import Foundation
import Testing

/// `RecordJSON`, the `data` of sync mutations and changes: what it reads is what it writes, value for value.
@Suite struct RecordJSONTests {
    static let text = #"""
        {"name":"Leg \"day\"\n\t\u0001 ünïcødé 🏋️ a/b","count":30,"ratio":4.5,"tiny":1e-05,"big":12345678901234,
         "negative":-2,"done":true,"skipped":false,"note":null,"days":[1,"two",[3.25],{"x":null}],
         "nested":{"inner":{"deep":[true]}},"empty":{},"none":[]}
        """#

    @Test func readingAndWritingKeepsEveryValue() throws {
        let record = try RecordJSON(json: Data(Self.text.utf8))
        let fields = try record.fields()
        #expect(fields["name"] == .string("Leg \"day\"\n\t\u{01} ünïcødé 🏋️ a/b"))
        #expect(fields["count"] == .int(30))
        #expect(fields["ratio"] == .double(4.5))
        #expect(fields["tiny"] == .double(0.00001))
        #expect(fields["big"] == .int(12_345_678_901_234))
        #expect(fields["negative"] == .int(-2))
        #expect(fields["done"] == .bool(true))
        #expect(fields["skipped"] == .bool(false))
        #expect(fields["note"] == .null)
        #expect(fields["days"] == .array([.int(1), .string("two"), .array([.double(3.25)]), .object(["x": .null])]))
        #expect(fields["nested"] == .object(["inner": .object(["deep": .array([.bool(true)])])]))
        #expect(fields["empty"] == .object([:]))
        #expect(fields["none"] == .array([]))
        #expect(fields.count == 13)

        // Written text reads back the same, by this type and by Foundation's own decoder.
        let written = try record.jsonData()
        #expect(try RecordJSON(json: written) == record)
        #expect(String(decoding: written, as: UTF8.self).hasPrefix(#"{"big":12345678901234,"count":30,"days":[1,"two",[3.25],{"x":null}]"#))
        let foundation = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        #expect(foundation["name"] as? String == "Leg \"day\"\n\t\u{01} ünïcødé 🏋️ a/b")
        #expect(foundation.count == 13)

        // Inside a message, as the generated code encodes and decodes it.
        let mutation = Components.Schemas.SyncMutation(
            mutationId: "m1", collection: .plans, id: "p1", op: .upsert, updatedAt: Date(timeIntervalSince1970: 1_800_000_000), data: record
        )
        let decoded = try JSONDecoder().decode(Components.Schemas.SyncMutation.self, from: JSONEncoder().encode(mutation))
        #expect(decoded.data == record)
    }

    @Test func aRecordIsEncodedInPlaceWithTheMessagesSettings() throws {
        struct Log: Codable, Sendable {
            var id: String
            var completedAt: Date
            var rating: Int?
        }
        let log = Log(id: "a/b", completedAt: Date(timeIntervalSince1970: 1_800_000_000), rating: nil)
        let change = Components.Schemas.SyncChange(
            collection: .workoutLogs, id: "a/b", version: 1, deleted: false, updatedAt: log.completedAt, data: RecordJSON(record: log)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let text = String(decoding: try encoder.encode(change), as: UTF8.self)
        #expect(text.contains(#""data":{"completedAt":"2027-01-15T08:00:00Z","id":"a/b"}"#))
        // The same record as fields is equal to it, and decodes back into the type.
        let fields = try RecordJSON(json: Data(#"{"id":"a/b","completedAt":"2027-01-15T08:00:00Z"}"#.utf8))
        #expect(fields == RecordJSON(record: log))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try fields.decode(Log.self, using: decoder).completedAt == log.completedAt)
    }

    @Test func onlyAnObjectIsARecord() {
        #expect(throws: DecodingError.self) { try RecordJSON(json: Data("[1,2]".utf8)) }
        #expect(throws: DecodingError.self) { try RecordJSON(json: Data(#""text""#.utf8)) }
        #expect(throws: (any Error).self) { try RecordJSON(json: Data("{".utf8)) }
    }
}
