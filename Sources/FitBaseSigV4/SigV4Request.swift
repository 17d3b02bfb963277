/// One HTTP request as AWS Signature Version 4 sees it: method, path and query as plain (decoded) text, and headers.
///
/// The signer encodes the path and the query itself, so what it signs and what `target` puts on the wire are the same
/// bytes.
public struct SigV4Request: Sendable, Equatable {
    /// One query parameter, decoded.
    public struct QueryItem: Sendable, Equatable {
        /// The parameter's name, decoded.
        public var name: String
        /// The parameter's value, decoded (empty for a bare `?name`).
        public var value: String

        /// A query parameter from its decoded name and value.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// One header line; a name may repeat.
    public struct Header: Sendable, Equatable {
        /// The header's name as sent (signing lowercases it).
        public var name: String
        /// The header's value as sent (signing trims it and folds its runs of spaces).
        public var value: String

        /// A header from its name and value.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The HTTP method, upper case.
    public var method: String
    /// The path, decoded (`/bucket/photos/a b.jpg`); it must start with `/`.
    public var path: String
    /// The query parameters, decoded, in any order.
    public var query: [QueryItem]
    /// The headers; signing needs `Host` among them.
    public var headers: [Header]

    /// A request from its parts; `path` and `query` are decoded text.
    public init(method: String, path: String, query: [QueryItem] = [], headers: [Header] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }

    /// The value of the first header named `name` (any case).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// The request target to send: the path encoded as it was signed (without normalisation), then `?` and the
    /// canonical query when there is one.
    public var target: String {
        let encodedPath = SigV4Encoding.encodePath(path)
        let query = SigV4Encoding.canonicalQuery(query)
        return query.isEmpty ? encodedPath : encodedPath + "?" + query
    }
}
