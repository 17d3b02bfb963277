import FitBaseAPI
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// What the device keeps: sealed at rest, gone after sign-out, and in step with the server as soon as it announces a
/// change.
@Suite struct DeviceDataTests {
    @Test func theStoreHoldsNoPlaintextHealthCycleOrNotesAndIsEmptyAfterSignOut() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let email = "sealed-\(UUID().uuidString.prefix(8))@example.com"
            _ = try await device.dependencies.auth.signUp(email: email, password: LiveDevice.password, displayName: nil)
            _ = try await device.dependencies.profile.recordConsent(.healthData, version: "2026-01", granted: true)
            let workout = try #require(try await device.dependencies.catalog.workouts(matching: .all, page: .first(1), policy: .cacheFirst).value.items.first)
            let today = CalendarDay(device.clock.now, in: .gmt)
            _ = try await device.dependencies.cycle.logPeriod(
                Period(start: today.adding(days: -2), flow: .heavy, symptoms: ["MARKER-CYCLE-SYMPTOM"], notes: "MARKER-CYCLE-NOTE"))
            _ = try await device.dependencies.history.log(
                WorkoutCompletion(workoutID: workout.id, completedAt: device.clock.now, durationMinutes: 20, notes: "MARKER-LOG-NOTE"))
            // Health samples uploaded elsewhere reach the device through sync, decrypted by the server.
            let other = FitBaseClient(serverURL: server)
            try await other.signIn(email: email, password: LiveDevice.password)
            try await HealthUpload.samples(other, now: device.clock.now, marker: "MARKER-HEALTH-META")
            try await device.dependencies.plans.syncNow()
            _ = try await device.dependencies.recommendations.today(energy: nil, policy: .revalidate)

            let bytes = try device.storeBytes()
            #expect(!bytes.isEmpty)
            for marker in ["MARKER-CYCLE-SYMPTOM", "MARKER-CYCLE-NOTE", "MARKER-LOG-NOTE", "MARKER-HEALTH-META", "heavy", "heartRate", "bloodPressure"] {
                #expect(!bytes.contains(Data(marker.utf8)), "\(marker) is in the store in plaintext")
            }
            // The device reads its own records back.
            #expect(try await device.dependencies.cycle.periods().first?.notes == "MARKER-CYCLE-NOTE")
            #expect(try await device.dependencies.history.history().first?.log.notes == "MARKER-LOG-NOTE")

            await device.dependencies.auth.signOut()
            #expect(try await device.dependencies.cycle.periods().isEmpty)
            #expect(try await device.dependencies.history.history().isEmpty)
            let after = try device.storeBytes()
            for marker in ["MARKER-CYCLE-NOTE", "MARKER-LOG-NOTE", "MARKER-HEALTH-META"] {
                #expect(!after.contains(Data(marker.utf8)))
            }
        }
    }

    @Test func aSyncEventPullsTheOtherDevicesChange() async throws {
        try await LiveDevice.withServer { server, _ in
            let email = "events-\(UUID().uuidString.prefix(8))@example.com"
            let phone = try LiveDevice(server: server)
            let tablet = try LiveDevice(server: server)
            defer {
                phone.remove()
                tablet.remove()
            }
            _ = try await phone.dependencies.auth.signUp(email: email, password: LiveDevice.password, displayName: nil)
            _ = try await tablet.dependencies.auth.signIn(email: email, password: LiveDevice.password)
            try await tablet.dependencies.plans.syncNow()
            // Give the tablet's event stream time to open before the phone's change.
            try await Task.sleep(for: .milliseconds(500))
            let plan = TrainingPlan(name: "From the phone", startDate: CalendarDay(year: 2026, month: 11, day: 2)!, daysPerWeek: 3)
            _ = try await phone.dependencies.plans.save(plan)
            try await phone.dependencies.plans.syncNow()
            var arrived = false
            for _ in 0..<100 where !arrived {
                arrived = try await tablet.dependencies.plans.plan(id: plan.id) != nil
                if !arrived { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(arrived, "the tablet did not pull on the server's sync event")
        }
    }
}
