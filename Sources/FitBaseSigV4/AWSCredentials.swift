/// The credentials a request is signed with: an access key, its secret and, for temporary credentials, a session token.
public struct AWSCredentials: Sendable, Equatable {
    /// The access key id (`AKIA…`), sent in the clear in the credential scope.
    public var accessKeyID: String
    /// The secret access key; it never leaves this process.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `X-Amz-Security-Token`.
    public var sessionToken: String?

    /// Credentials from their parts.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// Credentials from the usual variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), or
    /// nil when either of the first two is missing or empty.
    public init?(environment: [String: String]) {
        guard let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
            let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else { return nil }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        self.init(accessKeyID: key, secretAccessKey: secret, sessionToken: token)
    }
}
