import FitBaseCore
import Foundation

/// JSON as the contract writes it (RFC 3339 instants), and the one bridge from a generated type to Core's record of the
/// same JSON: `CoreRecordContractTests` hold each pair's shapes equal, so no record is copied field by field.
package enum ContractJSON {
    /// Reads RFC 3339 instants, fractional seconds or not.
    package static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = InternetDateTime.date(from: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "is not an RFC 3339 date-time")
            }
            return date
        }
        return decoder
    }()

    /// Writes RFC 3339 instants in UTC.
    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(InternetDateTime.string(from: date))
        }
        return encoder
    }()

    /// `value` (a generated type) read as Core's `T` through its JSON; one that does not read is an answer the SDK
    /// does not understand.
    package static func record<T: Decodable>(_ type: T.Type, from value: some Encodable) throws(FitBaseError) -> T {
        do {
            return try decoder.decode(type, from: try encoder.encode(value))
        } catch {
            throw .unexpectedResponse(statusCode: 200)
        }
    }
}
