import FitBaseCore
import Foundation

extension JSONEncoder.DateEncodingStrategy {
    /// RFC 3339 in UTC to the second, as `.iso8601` writes it (``InternetDateTime``).
    static let internetDateTime = JSONEncoder.DateEncodingStrategy.custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(InternetDateTime.string(from: date))
    }
}

extension JSONDecoder.DateDecodingStrategy {
    /// RFC 3339, with or without fractional seconds (``InternetDateTime``).
    static let internetDateTime = JSONDecoder.DateDecodingStrategy.custom { decoder in
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = InternetDateTime.date(from: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "must be an RFC 3339 date-time")
        }
        return date
    }
}
