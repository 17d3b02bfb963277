import FitBaseCore
import Foundation

/// A record of a synced collection, as the SDK keeps it on the device. Decodes from the server's JSON for the
/// collection (unknown keys ignored) and encodes to the body the collection's REST endpoint takes. Its id is written
/// as text in the local store and on the wire.
public protocol SyncedRecord: Codable, Sendable, Identifiable where ID: LosslessStringConvertible & Sendable {
    static var collection: SyncCollection { get }
}

extension TrainingPlan: SyncedRecord {
    public static let collection = SyncCollection.plans
}

extension WorkoutLog: SyncedRecord {
    public static let collection = SyncCollection.workoutLogs
}

extension Period: SyncedRecord {
    public static let collection = SyncCollection.cycleLogs
}

extension FertilitySignal: SyncedRecord {
    public static let collection = SyncCollection.cycleSignals
}

/// JSON as the SDK stores and sends records: RFC 3339 instants.
enum RecordCoding {
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(value)
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? Date(text, strategy: .iso8601) { return date }
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "is not an RFC 3339 date-time")
        }
        return try decoder.decode(type, from: data)
    }
}
