// Measures APNsProvider against a fake gateway (see scripts/bench/bench-apns.sh): PUSHES pushes with at most CONCURRENCY in
// flight, after one push that opens the connection and signs the provider token.
//
//   FITBASE_APNS_TEAM_ID=… FITBASE_APNS_KEY_ID=… FITBASE_APNS_KEY_FILE=… FITBASE_APNS_TOPIC=… \
//   FITBASE_APNS_TEST_GATEWAY_URL=https://127.0.0.1:PORT FITBASE_APNS_TEST_CA_FILE=ca.pem \
//   fitbase-apns-bench [PUSHES [CONCURRENCY]]
import FitBaseServer
import Foundation
import Logging

@main
struct APNsBenchmark {
    static let payload = Data(
        #"{"aps":{"alert":{"title":"Weekly challenge","body":"Ada moved ahead of you on the leaderboard"},"sound":"default"},"group":"3f1c"}"#
            .utf8
    )

    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        let pushes = arguments.first.flatMap(Int.init) ?? 10_000
        let concurrency = arguments.dropFirst().first.flatMap(Int.init) ?? 1_000
        var logger = Logger(label: "fitbase.apns-bench")
        logger.logLevel = .error
        guard let configuration = try APNsConfiguration(environment: ProcessInfo.processInfo.environment) else {
            FileHandle.standardError.write(Data("set FITBASE_APNS_* (see scripts/bench/bench-apns.sh)\n".utf8))
            exit(64)
        }
        let provider = APNsProvider(configuration: configuration, logger: logger, clock: .system)
        let devices = (0..<1_000).map { _ in (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() }

        let warmUp = await provider.send(message(to: devices[0]))
        guard case .delivered = warmUp else {
            print("warm-up push failed: \(warmUp)")
            try await provider.shutdown()
            exit(1)
        }
        let start = ContinuousClock.now
        let outcomes = await withTaskGroup(of: String.self, returning: [String: Int].self) { group in
            var launched = 0
            var outcomes: [String: Int] = [:]
            while launched < min(concurrency, pushes) {
                let device = devices[launched % devices.count]
                group.addTask { summary(await provider.send(message(to: device))) }
                launched += 1
            }
            for await outcome in group {
                outcomes[outcome, default: 0] += 1
                if launched < pushes {
                    let device = devices[launched % devices.count]
                    group.addTask { summary(await provider.send(message(to: device))) }
                    launched += 1
                }
            }
            return outcomes
        }
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "\(pushes) pushes, \(concurrency) in flight: \(String(format: "%.2f", seconds)) s, "
                + "\(Int((Double(pushes) / seconds).rounded())) pushes/s; outcomes \(outcomes.sorted { $0.key < $1.key })"
        )
        try await provider.shutdown()
    }

    static func message(to device: String) -> PushMessage {
        PushMessage(deviceToken: device, environment: .production, collapseID: "leaderboard", id: UUID(), payload: payload)
    }

    static func summary(_ outcome: PushOutcome) -> String {
        switch outcome {
        case .delivered: "delivered"
        case .deviceGone(let reason, _): "deviceGone \(reason)"
        case .retry(let reason, _): "retry \(reason)"
        case .rejected(let reason): "rejected \(reason)"
        }
    }
}
