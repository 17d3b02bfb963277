import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime

/// Decides which ``Problem`` a thrown error becomes. Unknown errors become `internal_error` and nothing else.
enum ProblemMapping {
    /// The problem for `error`, or `nil` when it is an unexpected failure (a 500 that must be logged).
    static func problem(for error: any Error) -> Problem? {
        switch error {
        case let problem as Problem:
            return problem
        case let domain as any ProblemConvertible:
            return domain.problem
        case let invalid as InvalidFields:
            return .validationFailed(invalid)
        case let serverError as ServerError:
            return problem(forOpenAPI: serverError)
        case let decodingError as DecodingError:
            return problem(forDecoding: decodingError)
        case let httpError as any HTTPResponseError:
            return problem(forStatus: httpError.status, message: (httpError as? HTTPError)?.body)
        default:
            return nil
        }
    }

    /// Errors from the generated server: our own errors come back wrapped; the rest are request-shape problems.
    private static func problem(forOpenAPI error: ServerError) -> Problem? {
        if let decoding = error.underlyingError as? DecodingError, let problem = problem(forQuery: decoding, path: error.request.path) {
            return problem
        }
        if let problem = problem(for: error.underlyingError) {
            return problem
        }
        guard (400..<500).contains(error.httpStatus.code) else { return nil }
        switch error.httpStatus {
        case .unsupportedMediaType:
            return Problem(.unsupportedMediaType, code: .unsupportedMediaType, detail: error.causeDescription)
        case .notAcceptable:
            return Problem(.notAcceptable, code: .notAcceptable, detail: error.causeDescription)
        default:
            return .invalidRequest(error.causeDescription)
        }
    }

    /// A query parameter whose value does not decode (e.g. `?intensity=extreme`, or `?week=abc` for an integer), named
    /// from the rejected value.
    private static func problem(forQuery error: DecodingError, path: String?) -> Problem? {
        guard let query = path.flatMap({ URLComponents(string: $0) })?.queryItems else { return nil }
        let rejected: (String) -> Bool
        switch error {
        case .dataCorrupted(let context):
            rejected = { context.debugDescription.hasSuffix("value \($0)") }
        case .typeMismatch(let type, let context) where context.codingPath.isEmpty && (type == Int.self || type == Double.self || type == Bool.self):
            // The URI decoder names neither the parameter nor the value: the first value that is not of the type is it.
            rejected = { value in type == Int.self ? Int(value) == nil : type == Double.self ? Double(value) == nil : Bool(value) == nil }
        default:
            return nil
        }
        guard let item = query.first(where: { item in item.value.map { !$0.isEmpty && rejected($0) } ?? false }) else { return nil }
        let message = "has an invalid value \"\(item.value ?? "")\""
        return .invalidRequest("\(item.name) \(message).", fieldErrors: [.init(field: item.name, message: message)])
    }

    /// A request body that is not JSON, or not the JSON the operation expects, naming the field at fault.
    static func problem(forDecoding error: DecodingError) -> Problem {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            let reason = context.underlyingError.map { " (\(describe($0)))" } ?? ""
            return .malformedJSON("The request body is not valid JSON\(reason).")
        case .dataCorrupted(let context):
            return invalidField(context.codingPath, message: context.debugDescription)
        case .keyNotFound(let key, let context):
            return invalidField(context.codingPath + [key], message: "is required")
        case .valueNotFound(_, let context):
            return invalidField(context.codingPath, message: "must not be null")
        case .typeMismatch(let type, let context):
            return invalidField(context.codingPath, message: "must be \(jsonKind(of: type))")
        @unknown default:
            return .invalidRequest("The request body does not match the operation's schema.")
        }
    }

    private static func invalidField(_ path: [any CodingKey], message: String) -> Problem {
        let field = fieldPath(path)
        return .invalidRequest("\(field.isEmpty ? "The request body" : field) \(message).", fieldErrors: [.init(field: field, message: message)])
    }

    /// `["samples", 3, "value"]` → `samples[3].value`.
    static func fieldPath(_ path: [any CodingKey]) -> String {
        var result = ""
        for key in path {
            if let index = key.intValue {
                result += "[\(index)]"
            } else {
                result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return result
    }

    private static func jsonKind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int32.Type, is Int64.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }

    private static func describe(_ error: any Error) -> String {
        let text = "\(error)"
        // Foundation's JSON errors carry their useful part in the debug description.
        if let range = text.range(of: "NSDebugDescription=") {
            return String(text[range.upperBound...].prefix { $0 != "," && $0 != "}" })
        }
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }

    private static func problem(forStatus status: HTTPResponse.Status, message: String?) -> Problem {
        switch status {
        case .notFound:
            return .notFound(message ?? "No such resource.")
        case .contentTooLarge:
            return Problem(.contentTooLarge, code: .payloadTooLarge, detail: message ?? "The request body is too large.")
        case .badRequest:
            return .invalidRequest(message ?? "The request is invalid.")
        case .unauthorized:
            return Problem(.unauthorized, code: .unauthenticated, detail: message)
        case .forbidden:
            return Problem(.forbidden, code: .forbidden, detail: message)
        default:
            // The contract's codes are a closed set: a status without one of its own is a bad request or a failure.
            let code: ProblemCode = switch status {
            case .methodNotAllowed: .methodNotAllowed
            case .notAcceptable: .notAcceptable
            case .unsupportedMediaType: .unsupportedMediaType
            default: status.kind == .clientError ? .invalidRequest : .internalError
            }
            return Problem(status, code: code, detail: message)
        }
    }
}

extension Problem {
    /// 400 `validation_failed` for the rules an input broke in `FitBaseCore`, listing the same fields in the same order.
    /// REST handlers leave the mapping to ``ProblemMapping``; a synced collection's `checkUpsert` throws this instead,
    /// since a push rejects a mutation alone only for a `Problem`.
    static func validationFailed(_ invalid: InvalidFields) -> Problem {
        validationFailed(invalid.errors.map { .init(field: $0.field, message: $0.message) })
    }
}
