// Measures offline-first sync through the SDK against a running server (see scripts/bench/bench-sync.sh):
// one device queues N changes offline and pushes them; a second device of the same user pulls them all.
//
//   fitbase-sync-bench SERVER_URL [COUNT [EMAIL PASSWORD]]
//
// With EMAIL and PASSWORD it signs in to that account (which must be allowed more than one plan: the pro tier);
// without them it signs up a new free account and pushes workout logs only.
import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

@main
struct SyncBenchmark {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard let server = arguments.first.flatMap(URL.init(string:)) else {
            print("usage: fitbase-sync-bench SERVER_URL [COUNT [EMAIL PASSWORD]]")
            exit(64)
        }
        let count = arguments.dropFirst().first.flatMap(Int.init) ?? 10_000
        let account = Array(arguments.dropFirst(2).prefix(2))
        let email = account.first ?? "bench-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = account.count == 2 ? account[1] : "benchmark password"
        let withPlans = account.count == 2

        let writer = FitBaseClient(serverURL: server)
        if withPlans {
            try await writer.signIn(email: email, password: password, deviceName: "bench writer")
        } else {
            try await writer.signUp(email: email, password: password, deviceName: "bench writer")
        }
        guard let listed = try await writer.api.listWorkouts(query: .init(limit: 1)).ok.body.json.items.first, let workout = WorkoutID(listed.id) else {
            print("the server's catalog is empty")
            exit(1)
        }
        let phone = SyncEngine(client: writer, store: try LocalStore.inMemory())

        // Half plans, half workout logs (logs only without a pro account), written locally as an app would.
        let queueing = ContinuousClock.now
        for index in 0..<count {
            if withPlans, index.isMultiple(of: 2) {
                try await phone.plans.save(TrainingPlan(
                    name: "Plan \(index)", startDate: CalendarDay(year: 2026, month: 11, day: 2)!, daysPerWeek: 3,
                    weeklyWorkouts: [.init(week: 1, days: [.init(day: 1, workouts: [workout]), .init(day: 3, workouts: [workout])])]
                ))
            } else {
                try await phone.history.log(listed, completedAt: Date.now.addingTimeInterval(-Double(index) * 60), duration: 30, rating: 4)
            }
        }
        let queued = ContinuousClock.now - queueing
        let pending = try await phone.store.pendingCount()

        let pushing = ContinuousClock.now
        try await phone.pushPending()
        let pushed = ContinuousClock.now - pushing
        let left = try await phone.store.pendingCount()

        let reader = FitBaseClient(serverURL: server)
        try await reader.signIn(email: email, password: password, deviceName: "bench reader")
        let tablet = SyncEngine(client: reader, store: try LocalStore.inMemory())
        let pulling = ContinuousClock.now
        try await tablet.syncNow()
        let pulled = ContinuousClock.now - pulling
        let received = try await tablet.plans.all().count + tablet.history.all().count

        func seconds(_ duration: Duration) -> String {
            String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }
        func rate(_ duration: Duration) -> String {
            String(format: "%.0f/s", Double(count) / (Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18))
        }
        print("queued locally: \(pending) changes in \(seconds(queued)) (\(rate(queued)))")
        print("push: \(count) mutations in \(seconds(pushed)) (\(rate(pushed))), \(left) left in the queue")
        print("pull on a second device: \(received) records in \(seconds(pulled)) (\(rate(pulled)))")
        guard pending == count, left == 0, received == count else {
            print("MISMATCH: expected \(count) queued, pushed and pulled")
            exit(1)
        }
    }
}
