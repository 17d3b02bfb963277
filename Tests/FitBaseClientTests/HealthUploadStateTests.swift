import FitBaseCore
import Foundation
import Testing

@testable import FitBaseClient

/// The uploader's place in HealthKit — anchors and the batch on its way — is sealed in the local store, moves on in one
/// transaction, and is forgotten on erase.
@Suite struct HealthUploadStateTests {
    @Test func theBatchOnItsWayIsSealedAndItsAnchorSavedWithItsEnd() async throws {
        let directory = LocalStoreSealingTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let keys = InMemoryKeyProvider()
        let store = try LocalStore(path: path, keyProvider: keys)
        #expect(try await store.healthAnchor(of: .heartRate) == nil)
        #expect(try await store.pendingHealthBatch() == nil)

        let sample = HealthSample(
            id: HealthSampleID(), value: .heartRate(beatsPerMinute: 187), start: Date(timeIntervalSince1970: 1_790_000_000), sourceId: "com.apple.health",
            metadata: ["note": "MARKER-PENDING-HEALTH"])
        let batch = LocalStore.PendingHealthBatch(type: .heartRate, samples: [sample], anchor: HealthKitAnchor(data: Data("MARKER-ANCHOR".utf8)))
        try await store.beginHealthBatch(batch)
        for marker in ["MARKER-PENDING-HEALTH", "MARKER-ANCHOR", "187"] {
            #expect(!LocalStoreSealingTests.bytes(path).contains(Data(marker.utf8)), "\(marker)")
        }
        // A store opened again (the app restarted) finds the batch as it was kept.
        let reopened = try LocalStore(path: path, keyProvider: keys)
        #expect(try await reopened.pendingHealthBatch() == batch)
        #expect(try await reopened.healthAnchor(of: .heartRate) == nil)

        try await reopened.finishHealthBatch(batch)
        #expect(try await store.pendingHealthBatch() == nil)
        #expect(try await store.healthAnchor(of: .heartRate) == batch.anchor)
        #expect(try await store.healthAnchor(of: .steps) == nil)
        try await store.setHealthAnchor(HealthKitAnchor(data: Data([1, 2])), of: .steps)
        #expect(try await store.healthAnchor(of: .steps)?.data == Data([1, 2]))

        // Another key reads nothing; erasing forgets it all.
        let stranger = try LocalStore(path: path, keyProvider: InMemoryKeyProvider())
        await #expect(throws: (any Error).self) { try await stranger.healthAnchor(of: .heartRate) }
        try await store.erase()
        #expect(try await store.healthAnchor(of: .heartRate) == nil)
        #expect(try await store.healthAnchor(of: .steps) == nil)
    }
}
