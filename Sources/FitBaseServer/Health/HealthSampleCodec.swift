import FitBaseAPI
import FitBaseCore
import Foundation

/// The sealed part of a health sample — its value, source, device and metadata — in a compact binary form, so a year
/// of minute-level samples opens quickly: version (1 byte), value tag (1 byte) and its numbers (little-endian
/// doubles) or sleep stage (1 byte), then source id, device and metadata (JSON) as length-prefixed UTF-8.
enum HealthSampleCodec {
    static let version: UInt8 = 1
    /// Sleep stages by their stored number. Append only: stored samples keep these numbers forever.
    static let stages: [SleepStage] = [.inBed, .awake, .asleepUnspecified, .asleepCore, .asleepDeep, .asleepREM]

    /// What the sealed bytes hold.
    struct Sealed: Sendable, Equatable {
        var value: HealthValue
        var sourceID: String
        var device: String?
        var metadata: [String: String]?
    }

    static func encode(_ sample: HealthSample) -> Data {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(64)
        func double(_ value: Double) { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        func text(_ value: String?) {
            guard let value else { return bytes.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF]) }
            let utf8 = Array(value.utf8)
            withUnsafeBytes(of: UInt32(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: utf8)
        }
        switch sample.value {
        case .heartRate(let bpm): bytes.append(0); double(bpm)
        case .steps(let count): bytes.append(1); double(count)
        case .sleep(let stage): bytes.append(2); bytes.append(UInt8(stages.firstIndex(of: stage) ?? 0))
        case .oxygenSaturation(let percent): bytes.append(3); double(percent)
        case .bloodPressure(let systolic, let diastolic): bytes.append(4); double(systolic); double(diastolic)
        }
        text(sample.sourceId)
        text(sample.device)
        if let metadata = sample.metadata {
            // The metadata as a JSON object (keys sorted), written in place: `JSONSerialization` was 15 % of an upload.
            let start = bytes.count
            bytes.append(contentsOf: [0, 0, 0, 0])
            writeJSONObject(metadata, to: &bytes)
            let length = UInt32(bytes.count - start - 4).littleEndian
            withUnsafeBytes(of: length) { raw in for (offset, byte) in raw.enumerated() { bytes[start + offset] = byte } }
        } else {
            text(nil)
        }
        return Data(bytes)
    }

    /// The value alone (what summaries need), without reading source, device and metadata.
    static func decodeValue(_ data: Data) throws -> HealthValue {
        try decode(data, valueOnly: true).value
    }

    static func decode(_ data: Data) throws -> Sealed {
        try decode(data, valueOnly: false)
    }

    private static func decode(_ data: Data, valueOnly: Bool) throws -> Sealed {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(HealthSampleCodecError) -> Sealed in
            var offset = 0
            func byte() throws(HealthSampleCodecError) -> UInt8 {
                guard offset < raw.count else { throw .truncated }
                defer { offset += 1 }
                return raw[offset]
            }
            func double() throws(HealthSampleCodecError) -> Double {
                guard offset + 8 <= raw.count else { throw .truncated }
                defer { offset += 8 }
                return Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            }
            func text() throws(HealthSampleCodecError) -> String? {
                guard offset + 4 <= raw.count else { throw .truncated }
                let length = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                offset += 4
                if length == UInt32.max { return nil }
                guard offset + Int(length) <= raw.count else { throw .truncated }
                defer { offset += Int(length) }
                return String(decoding: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + Int(length)]), as: UTF8.self)
            }
            guard try byte() == version else { throw .unknownVersion }
            let value: HealthValue
            switch try byte() {
            case 0: value = .heartRate(beatsPerMinute: try double())
            case 1: value = .steps(count: try double())
            case 2:
                let index = Int(try byte())
                guard stages.indices.contains(index) else { throw .unknownValue }
                value = .sleep(stage: stages[index])
            case 3: value = .oxygenSaturation(percent: try double())
            case 4: value = .bloodPressure(systolic: try double(), diastolic: try double())
            default: throw .unknownValue
            }
            if valueOnly { return Sealed(value: value, sourceID: "", device: nil, metadata: nil) }
            guard let source = try text() else { throw .unknownValue }
            let device = try text()
            let metadata = try text().flatMap(metadataObject)
            return Sealed(value: value, sourceID: source, device: device, metadata: metadata)
        }
    }
}

extension HealthSampleCodec {
    /// `object` as JSON text with its keys in order.
    static func writeJSONObject(_ object: [String: String], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, key) in object.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeString(key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONValue.writeString(object[key]!, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Stored metadata read back: a JSON object of strings (as written by ``writeJSONObject(_:to:)``, or earlier by
    /// `JSONSerialization`); anything else reads as none.
    static func metadataObject(_ text: String) -> [String: String]? {
        var text = text
        let parsed = text.withUTF8 { JSONValue.parse(UnsafeRawBufferPointer($0)) }
        guard case .object(let fields)? = parsed else { return nil }
        return strings(fields)
    }

    /// A JSON object whose every value is a string, as metadata; `nil` when one is not.
    static func strings(_ fields: [String: JSONValue]) -> [String: String]? {
        var object: [String: String] = [:]
        object.reserveCapacity(fields.count)
        for (key, value) in fields {
            guard case .string(let string) = value else { return nil }
            object[key] = string
        }
        return object
    }
}

enum HealthSampleCodecError: Error {
    case truncated, unknownVersion, unknownValue
}
