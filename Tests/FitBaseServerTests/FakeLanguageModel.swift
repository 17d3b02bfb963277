import FitBaseServer
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// A local stand-in for Anthropic's Messages API (`POST /v1/messages`): checks the key and version headers, reads
/// the candidate ids out of the prompt, and replies in the API's message (or error) format as told.
final class FakeLanguageModel: Sendable {
    static let apiKey = "sk-ant-test-key"

    enum Behaviour: Sendable {
        /// Recommends the last three candidates (not the rules' order), the very last as the gentle option.
        case goodAnswer
        /// Names a workout that was not a candidate.
        case unknownID
        /// Text that is not the JSON asked for.
        case malformedJSON
        /// A good answer, after `delay`.
        case slow(Duration)
        /// An API error with this HTTP status.
        case error(status: Int, type: String)
    }

    /// What the server sent.
    struct Received: Sendable {
        let apiKey: String?
        let version: String?
        let model: String?
        let maxTokens: Int?
        let prompt: String
    }

    let baseURL: String
    private let state: Mutex<(behaviour: Behaviour, received: [Received])>

    init(port: Int, behaviour: Behaviour) {
        self.baseURL = "http://127.0.0.1:\(port)"
        self.state = Mutex((behaviour, []))
    }

    var behaviour: Behaviour {
        get { state.withLock { $0.behaviour } }
        set { state.withLock { $0.behaviour = newValue } }
    }

    var received: [Received] { state.withLock { $0.received } }

    /// Settings pointing the server at this fake. The time-out is generous (a loaded CI machine took over 800 ms for a good answer); a test of the time-out passes its own.
    func configuration(timeout: Duration = .seconds(10)) -> LanguageModelConfiguration {
        LanguageModelConfiguration(apiKey: Self.apiKey, baseURL: baseURL, model: "claude-test", timeout: timeout)
    }

    /// The candidate ids listed in a prompt (`- <id>: title (...)`).
    static func candidateIDs(in prompt: String) -> [String] {
        prompt.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("- "), let colon = line.firstIndex(of: ":") else { return nil }
            let id = line[line.index(line.startIndex, offsetBy: 2)..<colon]
            return id.count == 36 ? String(id) : nil
        }
    }

    static func run(behaviour: Behaviour = .goodAnswer, _ body: @escaping @Sendable (FakeLanguageModel) async throws -> Void) async throws {
        let box = Mutex<FakeLanguageModel?>(nil)
        let router = Router()
        router.post("/v1/messages") { request, _ -> Response in
            let data = Data(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            let prompt = ((object["messages"] as? [[String: Any]])?.first?["content"] as? String) ?? ""
            guard let fake = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            fake.state.withLock {
                $0.received.append(Received(
                    apiKey: request.headers[HTTPField.Name("x-api-key")!], version: request.headers[HTTPField.Name("anthropic-version")!],
                    model: object["model"] as? String, maxTokens: object["max_tokens"] as? Int, prompt: prompt
                ))
            }
            guard request.headers[HTTPField.Name("x-api-key")!] == apiKey else {
                return try reply(["type": "error", "error": ["type": "authentication_error", "message": "invalid x-api-key"]], status: 401)
            }
            let ids = candidateIDs(in: prompt)
            switch fake.behaviour {
            case .goodAnswer:
                return try message(goodAnswer(ids))
            case .unknownID:
                return try message(#"{"recommendations": [{"workoutId": "00000000-dead-4bee-8000-000000000000", "reason": "Made up.", "priority": 1}, {"workoutId": "\#(ids[0])", "reason": "Fine.", "priority": 2}, {"workoutId": "\#(ids[1])", "reason": "Fine.", "priority": 3}], "phaseGuidance": "Go.", "alternativeIfLowEnergy": "\#(ids[2])"}"#)
            case .malformedJSON:
                return try message("Sure! Here are my picks: {recommendations: [yoga, pilates")
            case .slow(let delay):
                try await Task.sleep(for: delay)
                return try message(goodAnswer(ids))
            case .error(let status, let type):
                return try reply(["type": "error", "error": ["type": type, "message": "fake failure"]], status: status)
            }
        }
        try await withLiveServer(Application(router: router, logger: TestDatabase.logger)) { _, url in
            let fake = FakeLanguageModel(port: try #require(url.port), behaviour: behaviour)
            box.withLock { $0 = fake }
            try await body(fake)
        }
    }

    /// The reasons of a good answer start with this, so tests can tell them from the rules'.
    static let reasonPrefix = "Coach says:"

    private static func goodAnswer(_ ids: [String]) -> String {
        let picks = ids.suffix(3).reversed()
        let items = picks.enumerated().map { #"{"workoutId": "\#($1)", "reason": "\#(reasonPrefix) pick \#($0 + 1)", "priority": \#($0 + 1)}"# }
        return "```json\n{\"recommendations\": [\(items.joined(separator: ", "))], \"phaseGuidance\": \"Be kind to yourself.\", \"alternativeIfLowEnergy\": \"\(ids.last ?? "")\"}\n```"
    }

    private static func message(_ text: String) throws -> Response {
        try reply([
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [["type": "text", "text": text]], "stop_reason": "end_turn", "stop_sequence": NSNull(),
            "usage": ["input_tokens": 100, "output_tokens": 50],
        ], status: 200)
    }

    private static func reply(_ object: Any, status: Int) throws -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object)))
        )
    }
}
