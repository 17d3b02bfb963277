import FitBaseCore
import Foundation
import OpenAPIRuntime

/// Dates in request and response bodies, as RFC 3339 (``InternetDateTime``): what OpenAPIRuntime's `.iso8601`
/// transcoder reads and writes, without going through ICU for each date. The server and the SDK both use it.
public struct InternetDateTimeTranscoder: DateTranscoder {
    public init() {}

    public func encode(_ date: Date) throws -> String {
        InternetDateTime.string(from: date)
    }

    public func decode(_ text: String) throws -> Date {
        guard let date = InternetDateTime.date(from: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Expected an RFC 3339 date-time, found \(text)."))
        }
        return date
    }
}
