import FitBaseAPI
import FitBaseCore
import HTTPTypes
import OpenAPIRuntime

/// Every failure the SDK reports: a problem the server described, or a failure to reach or understand it.
public enum FitBaseError: Error, Sendable, Equatable {
    /// The server answered with an RFC 9457 problem; switch over ``APIProblem/code``.
    case problem(APIProblem)
    /// The server could not be reached or the connection failed.
    case transport(String)
    /// The server answered something the contract does not describe.
    case unexpectedResponse(statusCode: Int)
    /// The call needs a signed-in user and there is none (never signed in, signed out, or the session ended).
    case notSignedIn
    /// The device's local store or token store failed (disk full, file unreadable).
    case storage(String)

    /// A message suitable for showing to the app's user.
    public var userFacingMessage: String {
        switch self {
        case .problem(let problem): problem.detail ?? problem.title
        case .transport: "The server could not be reached. Check your connection and try again."
        case .unexpectedResponse: "The server sent an unexpected answer. Please try again later."
        case .notSignedIn: "Please sign in."
        case .storage: "Your data could not be saved on this device. Check the free space and try again."
        }
    }

    /// The HTTP status of the server's refusal (a problem or an answer the contract does not describe); `nil` when no
    /// answer came.
    public var statusCode: Int? {
        switch self {
        case .problem(let problem): problem.status
        case .unexpectedResponse(let statusCode): statusCode
        case .transport, .notSignedIn, .storage: nil
        }
    }

    /// What an error thrown by a generated-client call means: an SDK error raised inside (a refused answer through
    /// ``ProblemAnswers``, an ended session) comes out as itself; a transport's failure is `.transport`; an answer that
    /// is not the one the call reads (another status, a body that does not decode) is `.unexpectedResponse`; anything else (a raw request's transport) is `.transport`.
    package init(thrownByCall error: any Error) {
        switch error {
        case let error as FitBaseError:
            self = error
        case let error as ClientError:
            if let inner = error.underlyingError as? FitBaseError {
                self = inner
            } else if let status = error.response?.status.code {
                self = .unexpectedResponse(statusCode: status)
            } else {
                self = .transport(String(describing: error.underlyingError))
            }
        case is DecodingError:
            self = .unexpectedResponse(statusCode: 200)
        default:
            self = .transport(String(describing: error))
        }
    }

    package static func from(statusCode: Int, problem: Components.Schemas.Problem?) -> FitBaseError {
        guard let problem else { return .unexpectedResponse(statusCode: statusCode) }
        return .problem(APIProblem(problem))
    }

    package static func decoding<T>(_ body: () throws -> T) throws(FitBaseError) -> T {
        do { return try body() } catch { throw .unexpectedResponse(statusCode: 200) }
    }
}

/// A problem reported by the server (RFC 9457 with FitBase's stable `code`).
public struct APIProblem: Sendable, Equatable {
    /// What went wrong, to switch over (`.notFound`, `.validationFailed`, `.upgradeRequired`, …); `nil` when a newer
    /// server sent a code this SDK does not know yet — its text is in ``rawCode``; treat it by ``status``.
    public var code: ProblemCode?
    /// The code as the server sent it, e.g. `not_found`.
    public var rawCode: String
    /// HTTP status code.
    public var status: Int
    /// Short summary of the problem type.
    public var title: String
    /// Explanation of this occurrence.
    public var detail: String?
    /// Offending fields, for validation problems: `(field, message)`.
    public var fieldErrors: [FieldError]
    /// The request id to quote when reporting the problem.
    public var requestID: String?
    /// For a 402 `upgrade_required`: the lowest tier that unlocks what was asked for (`nil` for a tier this SDK does
    /// not know; ``rawRequiredTier`` has it).
    public var requiredTier: SubscriptionTier?
    /// `requiredTier` as the server sent it, including tiers newer than this SDK.
    public var rawRequiredTier: String?
    /// How long the server asks to wait before trying again (its `Retry-After`, for a 429 or a 503).
    public var retryAfterSeconds: Int?

    /// One offending field of a validation problem.
    public struct FieldError: Sendable, Equatable {
        public var field: String
        public var message: String
    }

    package init(_ problem: Components.Schemas.Problem) {
        self.rawCode = problem.code.value1?.rawValue ?? problem.code.value2 ?? ""
        self.code = ProblemCode(rawValue: rawCode)
        self.status = problem.status
        self.title = problem.title
        self.detail = problem.detail
        self.fieldErrors = (problem.errors ?? []).map { FieldError(field: $0.field, message: $0.message) }
        self.requestID = problem.requestId
        self.rawRequiredTier = problem.requiredTier.flatMap { $0.value1?.rawValue ?? $0.value2 }
        self.requiredTier = rawRequiredTier.flatMap(SubscriptionTier.init(rawValue:))
    }
}
