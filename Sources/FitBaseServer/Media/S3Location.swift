import Foundation

/// An S3-compatible bucket, from `FITBASE_STORAGE_URL=s3://bucket?region=eu-central-1&endpoint=http://127.0.0.1:9000`.
///
/// Without `endpoint` it is AWS (`https://<bucket>.s3.<region>.amazonaws.com`, virtual-hosted); with one, requests go
/// to that server with the bucket in the path (what MinIO, moto, Ceph and R2 accept), unless `path-style=false`.
package struct S3Location: Sendable, Equatable {
    let bucket: String
    let region: String
    /// `scheme://host[:port]` of the server, without a trailing slash.
    let endpoint: String
    /// Whether the bucket is the path's first segment (else the host's first label).
    let pathStyle: Bool

    /// The location a `s3://` URL names, nil when it is not one (no bucket, a bucket name S3 refuses, an endpoint
    /// that is not an absolute http(s) URL, an unknown parameter).
    init?(parsing text: String) {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
            components.scheme?.lowercased() == "s3", let bucket = components.host, Self.isBucketName(bucket),
            components.path.isEmpty || components.path == "/"
        else { return nil }
        var region = "us-east-1"
        var endpoint: String?
        var pathStyle: Bool?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "region":
                guard let value = item.value, !value.isEmpty, value.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else { return nil }
                region = value
            case "endpoint":
                guard let value = item.value, let url = URLComponents(string: value),
                    ["http", "https"].contains(url.scheme?.lowercased()), url.host?.isEmpty == false,
                    url.path.isEmpty || url.path == "/", url.query == nil
                else { return nil }
                endpoint = value.hasSuffix("/") ? String(value.dropLast()) : value
            case "path-style":
                guard let value = item.value.flatMap({ Bool($0.lowercased()) }) else { return nil }
                pathStyle = value
            default:
                return nil
            }
        }
        self.bucket = bucket
        self.region = region
        self.pathStyle = pathStyle ?? (endpoint != nil)
        if let endpoint {
            self.endpoint = endpoint
        } else {
            self.endpoint = self.pathStyle ? "https://s3.\(region).amazonaws.com" : "https://\(bucket).s3.\(region).amazonaws.com"
        }
    }

    /// The `Host` header for requests to the bucket (with the port when it is not the scheme's default).
    var host: String {
        guard let components = URLComponents(string: endpoint), let host = components.host else { return endpoint }
        let shown = host.contains(":") ? "[\(host)]" : host
        guard let port = components.port else { return shown }
        let isDefault = (components.scheme == "http" && port == 80) || (components.scheme == "https" && port == 443)
        return isDefault ? shown : "\(shown):\(port)"
    }

    /// The (decoded) path of an object, or of the bucket itself for `nil`.
    func path(of key: MediaKey?) -> String {
        let base = pathStyle ? "/\(bucket)" : ""
        guard let key else { return pathStyle ? base : "/" }
        return base + "/" + key.path
    }

    /// The URL as it may be logged (no credentials ever appear in it).
    var description: String { "s3://\(bucket) at \(endpoint)" }

    /// S3's rules for bucket names: 3–63 lower-case letters, digits, dots and hyphens, starting and ending with a
    /// letter or digit.
    private static func isBucketName(_ name: String) -> Bool {
        guard (3...63).contains(name.count), let first = name.first, let last = name.last,
            first.isLetter || first.isNumber, last.isLetter || last.isNumber
        else { return false }
        return name.allSatisfy { ($0.isLowercase && $0.isASCII) || ($0.isNumber && $0.isASCII) || $0 == "." || $0 == "-" }
    }
}
