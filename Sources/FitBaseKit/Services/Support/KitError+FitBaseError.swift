import FitBaseClient
import FitBaseCore

extension KitError {
    /// What an SDK failure means to the app's user.
    public init(_ error: FitBaseError) {
        switch error {
        case .transport: self.init(.offline)
        case .notSignedIn: self.init(Kind.notSignedIn)
        case .storage: self.init(.storage)
        case .unexpectedResponse: self.init(.server)
        case .problem(let problem): self.init(problem)
        }
    }

    /// What a problem the server reported means to the app's user: the server's `detail` as the message when it gave
    /// one, the kind from its stable code (or, for a code this SDK does not know, from its status).
    public init(_ problem: APIProblem) {
        let kind = Self.kind(of: problem)
        var fields: [String: String] = [:]
        for field in problem.fieldErrors where fields[field.field] == nil { fields[field.field] = field.message }
        self.init(
            kind, message: kind == .server ? nil : problem.detail, isRetryable: problem.code == .busy ? true : nil,
            requiredTier: problem.requiredTier ?? (kind == .upgradeRequired ? .premium : nil), fieldErrors: fields, code: problem.code,
            rawCode: problem.rawCode,
            requestID: problem.requestID
        )
    }

    private static func kind(of problem: APIProblem) -> Kind {
        switch problem.code {
        case .upgradeRequired: return .upgradeRequired
        case .reauthenticationRequired: return .reauthenticationRequired
        case .invalidCredentials, .wrongPassword, .passwordNotSet: return .invalidCredentials
        case .identityTokenBadSignature, .identityTokenExpired, .identityTokenMalformed, .identityTokenNonceMismatch, .identityTokenUnknownKey,
            .identityTokenUnsupportedAlgorithm, .identityTokenWrongAudience, .identityTokenWrongIssuer:
            return .invalidCredentials
        case .invalidRefreshToken, .refreshTokenReused, .sessionRevoked, .unauthenticated, .authenticationRequired: return .notSignedIn
        case .validationFailed, .invalidRequest, .malformedJson, .tokenExpired, .tokenInvalid, .tokenUsed, .invalidToken: return .invalidInput
        case .notFound: return .notFound
        case .rateLimited, .tooManyAttempts: return .rateLimited
        case .forbidden, .consentRequired: return .forbidden
        case .busy, .databaseUnavailable, .internalError: return .server
        default: break
        }
        switch problem.status {
        case 400, 422: return .invalidInput
        case 401: return .notSignedIn
        case 402: return .upgradeRequired
        case 403: return .forbidden
        case 404, 410: return .notFound
        case 409: return .conflict
        case 429: return .rateLimited
        default: return problem.status >= 500 ? .server : .conflict
        }
    }
}
