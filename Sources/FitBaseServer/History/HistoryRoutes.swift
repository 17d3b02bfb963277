import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// `POST /v1/history` and `GET /v1/history` answered without the generated server (``DirectRoute``s).
///
/// A log is the write an app makes most and the user's own list its most frequent read; the generated server's
/// `JSONDecoder` and `JSONEncoder` were a tenth of a log's CPU and a fifth of a list's. A log's body is read by
/// ``JSONValue/parse(_:)`` into the same `WorkoutLogInput` (a body with anything the contract does not name, a
/// mistyped field or a missing one is left to the generated handler, which answers with its problem) and logged by
/// the same ``HistoryOperations/logWorkout(_:)``. The page comes from the same
/// ``HistoryOperations/historyPage(of:from:to:offset:limit:)`` (same rows, same audit) and is written by hand, byte
/// for byte as the generated server's encoder writes it (sorted keys, absent fields left out, RFC 3339 instants); a
/// string with anything to escape is written by that encoder. Requests with a parameter it does not fully
/// understand (unknown, repeated, percent-encoded or invalid) go to the generated handler, which answers them.
extension HistoryOperations {
    /// The routes the history feature answers itself, for ``RoutingTransport``.
    var historyRoutes: [DirectRoute] {
        [
            DirectRoute(method: .get, path: "/v1/history") { request, _ in try await self.directHistoryPage(request) },
            DirectRoute.writtenJSONBody(.post, "/v1/history", status: .created, read: HistoryJSON.input(from:)) { input in
                guard case .created(let created) = try await self.logWorkout(.init(body: .json(input))), case .json(let log) = created.body else {
                    throw DirectRoute.UnexpectedOutput(operation: "logWorkout")
                }
                var body = ByteBuffer()
                HistoryJSON.write(log, to: &body)
                return body
            },
        ]
    }

    private func directHistoryPage(_ request: Request) async throws -> Response? {
        guard DirectRoute.acceptsJSON(request), let query = HistoryQuery(request.uri) else { return nil }
        let caller = try RequestScope.requireCaller()
        let page = try await historyPage(of: caller.user, from: query.from, to: query.to, offset: query.offset, limit: query.limit)
        var body = ByteBuffer()
        body.reserveCapacity(64 + page.logs.count * 360)
        body.writeStaticString(#"{"items":["#)
        for (index, log) in page.logs.enumerated() {
            if index > 0 { body.writeStaticString(",") }
            HistoryJSON.write(log, to: &body)
        }
        body.writeStaticString("]")
        if let cursor = page.nextCursor {
            body.writeStaticString(#","nextCursor":"#)
            HistoryJSON.write(string: cursor, to: &body)
        }
        body.writeStaticString("}")
        return DirectRoute.json(body)
    }
}

/// The parameters of a history listing the direct route takes: each known parameter at most once, in plain form.
private struct HistoryQuery {
    var limit = PageRequest.defaultLimit
    var offset = 0
    var from: CalendarDay?
    var to: CalendarDay?

    init?(_ uri: URI) {
        if let raw = uri.query, raw.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return nil }
        var seen: Set<Substring> = []
        for (key, value) in uri.queryParameters {
            guard seen.insert(key).inserted else { return nil }
            switch key {
            case "limit":
                guard let requested = Int(value), let limit = try? PageRequest.limit(requested) else { return nil }
                self.limit = limit
            case "cursor":
                guard let offset = try? PageRequest.offset(fromCursor: String(value)) else { return nil }
                self.offset = offset
            case "from":
                guard let day = CalendarDay(String(value)) else { return nil }
                from = day
            case "to":
                guard let day = CalendarDay(String(value)) else { return nil }
                to = day
            default:
                return nil
            }
        }
    }
}

/// A workout log's wire form (``HistoryWire``) as the generated server's encoder writes it.
enum HistoryJSON {
    static func write(_ log: WorkoutLog, to body: inout ByteBuffer) {
        write(HistoryWire.wire(log), to: &body)
    }

    static func write(_ wire: Components.Schemas.WorkoutLog, to body: inout ByteBuffer) {
        // Keys in the encoder's sorted order; optional fields only when present.
        body.writeStaticString(#"{"completedAt":"#)
        write(string: InternetDateTime.string(from: wire.completedAt), to: &body)
        if let cycleDay = wire.cycleDay { write(key: "cycleDay", int: cycleDay, to: &body) }
        if let cyclePhase = wire.cyclePhase {
            body.writeStaticString(#","cyclePhase":"#)
            write(string: cyclePhase.rawValue, to: &body)
        }
        write(key: "duration", int: wire.duration, to: &body)
        if let energyAfter = wire.energyAfter { write(key: "energyAfter", int: energyAfter, to: &body) }
        if let energyBefore = wire.energyBefore { write(key: "energyBefore", int: energyBefore, to: &body) }
        body.writeStaticString(#","id":"#)
        write(string: wire.id, to: &body)
        body.writeStaticString(#","localDate":"#)
        write(string: wire.localDate, to: &body)
        if let notes = wire.notes {
            body.writeStaticString(#","notes":"#)
            write(string: notes, to: &body)
        }
        if let rating = wire.rating { write(key: "rating", int: rating, to: &body) }
        body.writeStaticString(#","workoutId":"#)
        write(string: wire.workoutId, to: &body)
        body.writeStaticString(#","workoutTitle":"#)
        write(string: wire.workoutTitle, to: &body)
        body.writeStaticString(#","workoutType":"#)
        write(string: wire.workoutType.rawValue, to: &body)
        body.writeStaticString("}")
    }

    /// The `WorkoutLogInput` `json` holds, when every part of it is what the contract says and nothing else.
    static func input(from json: JSONValue?) -> Components.Schemas.WorkoutLogInput? {
        guard case .object(let fields)? = json, fields.keys.allSatisfy(inputKeys.contains),
            case .string(let workoutID)? = fields["workoutId"],
            case .string(let rawCompletedAt)? = fields["completedAt"], let completedAt = InternetDateTime.date(from: rawCompletedAt),
            case .int(let duration)? = fields["duration"]
        else { return nil }
        // Optional fields: absent or null is "not given", as the generated decoder reads them.
        func optionalInt(_ key: String) -> Int?? {
            switch fields[key] {
            case nil, .null?: .some(nil)
            case .int(let value)?: .some(value)
            default: nil
            }
        }
        guard let rating = optionalInt("rating"), let energyBefore = optionalInt("energyBefore"), let energyAfter = optionalInt("energyAfter")
        else { return nil }
        let notes: String?
        switch fields["notes"] {
        case nil, .null?: notes = nil
        case .string(let text)?: notes = text
        default: return nil
        }
        return .init(
            workoutId: workoutID, completedAt: completedAt, duration: duration, rating: rating, energyBefore: energyBefore, energyAfter: energyAfter,
            notes: notes
        )
    }

    /// The fields a `WorkoutLogInput` may have.
    private static let inputKeys: Set<String> = ["workoutId", "completedAt", "duration", "rating", "energyBefore", "energyAfter", "notes"]

    private static func write(key: StaticString, int: Int, to body: inout ByteBuffer) {
        body.writeStaticString(#",""#)
        body.writeStaticString(key)
        body.writeStaticString(#"":"#)
        write(decimal: int, to: &body)
    }

    /// `value` in decimal, as the encoder writes an integer, without making a `String` of it first.
    static func write(decimal value: Int, to body: inout ByteBuffer) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            body.writeBytes(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// `text` as a JSON string: printable ASCII other than a quote or backslash is written as it is (the encoder
    /// writes it so too); anything else by the generated server's encoder itself, so the bytes cannot differ.
    static func write(string text: String, to body: inout ByteBuffer) {
        if text.isPlainJSONText {
            body.writeStaticString("\"")
            body.writeString(text)
            body.writeStaticString("\"")
        } else if let encoded = try? DirectRoute.encoder.encode(text) {
            body.writeBytes(encoded)
        } else {
            // A `String` always encodes; written escaped as a last resort rather than dropped.
            body.writeString(AuditChain.jsonString(text))
        }
    }
}
