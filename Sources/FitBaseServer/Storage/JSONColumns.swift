import Foundation
import SQLKit

/// List-valued and document columns are JSON text on both engines (see ``DatabaseEngine``'s column conventions).
extension SQLRow {
    /// Decodes the JSON document stored as text in `column`.
    func decodeJSON<T: Decodable>(column: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(try decode(column: column, as: String.self).utf8))
    }
}

/// The JSON text a document column stores for `value`.
func jsonText(_ value: some Encodable) throws -> String {
    String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
}
