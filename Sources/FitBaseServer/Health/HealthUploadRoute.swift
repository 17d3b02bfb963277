import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import NIOCore

/// `POST /v1/health/samples` read without the generated server's decoder (a ``DirectRoute``).
///
/// `JSONDecoder` was 15 % of the CPU of an upload of 1,000 samples. Here the body is read by ``JSONValue/parse(_:)`` in
/// one pass into the same `HealthSampleUpload` value, which ``HealthOperations/uploadHealthSamples(_:)`` — the one
/// upload path — stores; the results are encoded with the generated server's settings. A body this reader does not
/// fully understand (not JSON, a missing or mistyped field, a field the contract does not name, a bad date, a repeated
/// key, another content type or `Accept`) is left to the generated handler, which answers with its problem.
extension HealthOperations {
    /// The routes this answers, for ``RoutingTransport``.
    var healthRoutes: [DirectRoute] {
        [
            DirectRoute.writtenJSONBody(.post, "/v1/health/samples", read: Self.upload(from:)) { upload in
                // The upload answers `ok` or throws (its problems are rendered as for every route).
                guard case .ok(let ok) = try await self.uploadHealthSamples(.init(body: .json(upload))), case .json(let results) = ok.body else {
                    throw DirectRoute.UnexpectedOutput(operation: "uploadHealthSamples")
                }
                return try Self.answer(results)
            }
        ]
    }

    /// The results as the generated server's encoder writes them (keys sorted, no white space). Without a problem among
    /// them — every id is then a sample's canonical id and every status a plain word — they are written here:
    /// `JSONEncoder` was 8 % of the CPU of an upload of 1,000 samples. Otherwise the encoder writes them.
    static func answer(_ results: Components.Schemas.HealthUploadResult) throws -> ByteBuffer {
        guard results.results.allSatisfy({ $0.problem == nil }) else { return ByteBuffer(bytes: try DirectRoute.encoder.encode(results)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(80 + results.results.count * 64)
        bytes.append(contentsOf: #"{"created":\#(results.created),"duplicates":\#(results.duplicates),"rejected":\#(results.rejected),"results":["#.utf8)
        for (index, result) in results.results.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: #"{"id":"#.utf8)
            JSONValue.writeString(result.id, into: &bytes)
            bytes.append(contentsOf: #","status":"#.utf8)
            JSONValue.writeString(result.status.rawValue, into: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(contentsOf: "]}".utf8)
        return ByteBuffer(bytes: bytes)
    }

    /// The upload `json` holds, when every part of it is what the contract says and nothing else.
    static func upload(from json: JSONValue?) -> Components.Schemas.HealthSampleUpload? {
        DirectRoute.array(named: "samples", in: json, item: sample(from:)).map { .init(samples: $0) }
    }


    private static func sample(from json: JSONValue) -> Components.Schemas.HealthSampleInput? {
        guard case .object(let fields) = json, fields.keys.allSatisfy(healthSampleKeys.contains),
            case .string(let id)? = fields["id"], case .string(let type)? = fields["type"],
            case .string(let rawStart)? = fields["start"], let start = InternetDateTime.date(from: rawStart),
            case .string(let sourceID)? = fields["sourceId"]
        else { return nil }
        // Optional fields: absent or null is "not given", as the generated decoder reads them; a number may be written
        // whole (`72`) or not (`72.5`).
        var sample = Components.Schemas.HealthSampleInput(id: id, _type: type, start: start, sourceId: sourceID)
        guard let value = number(fields["value"]), let systolic = number(fields["systolic"]), let diastolic = number(fields["diastolic"]),
            let unit = string(fields["unit"]), let stage = string(fields["stage"]), let device = string(fields["device"])
        else { return nil }
        (sample.value, sample.systolic, sample.diastolic, sample.unit, sample.stage, sample.device) = (value, systolic, diastolic, unit, stage, device)
        switch fields["end"] {
        case nil, .null?: break
        case .string(let rawEnd)?:
            guard let end = InternetDateTime.date(from: rawEnd) else { return nil }
            sample.end = end
        default: return nil
        }
        switch fields["metadata"] {
        case nil, .null?: break
        case .object(let entries)?:
            guard let metadata = HealthSampleCodec.strings(entries) else { return nil }
            sample.metadata = .init(additionalProperties: metadata)
        default: return nil
        }
        return sample
    }

    /// An optional number: `.some(nil)` when absent or null, `nil` when it is something else.
    private static func number(_ json: JSONValue?) -> Double?? {
        switch json {
        case nil, .null?: .some(nil)
        case .int(let value)?: .some(Double(value))
        case .double(let value)?: .some(value)
        default: nil
        }
    }

    /// An optional string: `.some(nil)` when absent or null, `nil` when it is something else.
    private static func string(_ json: JSONValue?) -> String?? {
        switch json {
        case nil, .null?: .some(nil)
        case .string(let value)?: .some(value)
        default: nil
        }
    }
}

/// The fields a sample may have.
private let healthSampleKeys: Set<String> = [
    "id", "type", "value", "unit", "systolic", "diastolic", "stage", "start", "end", "sourceId", "device", "metadata",
]
