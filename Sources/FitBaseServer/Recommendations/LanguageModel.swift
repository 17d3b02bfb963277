import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A language model that answers a prompt with text.
protocol LanguageModel: Sendable {
    /// The model's reply to `prompt`; throws on any transport, protocol or time-out failure.
    func complete(_ prompt: String) async throws -> String
}

/// Why the language model gave no usable reply.
struct LanguageModelError: Error, CustomStringConvertible {
    let reason: String
    var description: String { "language model: \(reason)" }
}

/// Anthropic's Messages API: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`, one user message
/// in, the text blocks of the assistant's message out. The whole exchange is bounded by the configured time-out.
struct AnthropicMessagesModel: LanguageModel {
    static let apiVersion = "2023-06-01"
    static let maxTokens = 1024

    let client: HTTPClient
    let configuration: LanguageModelConfiguration

    func complete(_ prompt: String) async throws -> String {
        struct MessageRequest: Encodable {
            struct Message: Encodable {
                let role: String
                let content: String
            }
            let model: String
            let max_tokens: Int
            let messages: [Message]
        }
        struct MessageResponse: Decodable {
            struct Block: Decodable {
                let type: String
                let text: String?
            }
            let content: [Block]
            let stop_reason: String?
        }
        struct ErrorResponse: Decodable {
            struct Detail: Decodable {
                let type: String
                let message: String?
            }
            let error: Detail
        }

        var request = HTTPClientRequest(url: configuration.baseURL + "/v1/messages")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "x-api-key", value: configuration.apiKey)
        request.headers.add(name: "anthropic-version", value: Self.apiVersion)
        request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(MessageRequest(
            model: configuration.model, max_tokens: Self.maxTokens, messages: [.init(role: "user", content: prompt)]
        ))))

        let client = self.client
        let prepared = request
        let timeout = configuration.timeout
        let (status, body) = try await withDeadline(timeout) {
            let response = try await client.execute(prepared, timeout: .seconds(60))
            return (response.status, Data(buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        guard status == .ok else {
            let detail = (try? JSONDecoder().decode(ErrorResponse.self, from: body)).map { "\($0.error.type): \($0.error.message ?? "")" }
            throw LanguageModelError(reason: "HTTP \(status.code) \(detail ?? "")")
        }
        let message: MessageResponse
        do {
            message = try JSONDecoder().decode(MessageResponse.self, from: body)
        } catch {
            throw LanguageModelError(reason: "the reply is not a Messages API message")
        }
        let text = message.content.filter { $0.type == "text" }.compactMap(\.text).joined()
        guard !text.isEmpty else { throw LanguageModelError(reason: "the reply has no text (stop_reason \(message.stop_reason ?? "none"))") }
        return text
    }
}

/// Runs `operation`, cancelling it and throwing once `limit` has passed.
func withDeadline<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw LanguageModelError(reason: "no reply within \(limit)")
        }
        return value
    }
}
