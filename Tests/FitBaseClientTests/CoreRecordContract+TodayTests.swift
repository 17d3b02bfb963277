import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Testing

/// Today's recommendations and the workouts they hold are Core's records of the contract's JSON: the SDK reads
/// ``getTodayRecommendations`` and ``refreshRecommendations`` with ``ContractJSON/record(_:from:)``, no copy by hand.
@Suite struct CoreRecordContractTodayTests {
    static let workout = CatalogWorkout(
        id: WorkoutID(), title: "Luteal Flow", description: "Slow and steady.", type: .yoga, durationMinutes: 30, intensity: .low,
        phases: [.luteal], equipment: [.yogaMat], thumbnailURL: "https://example.com/t.jpg", videoURL: "https://example.com/v.m3u8",
        instructorName: "Ana", tags: ["calm"], isFeatured: true, isPremium: false, targetAreas: [.fullBody], benefits: ["Stress relief"]
    )
    /// A premium workout as a caller without premium content gets it: no video.
    static let locked = CatalogWorkout(
        id: WorkoutID(), title: "Power Hour", description: "Strong.", type: .strength, durationMinutes: 60, intensity: .high,
        phases: [.follicular], equipment: [.dumbbells], thumbnailURL: "https://example.com/p.jpg", videoURL: "", instructorName: "Bea",
        tags: [], isFeatured: false, isPremium: true, targetAreas: [.upperBody], benefits: []
    )

    @Test func aWorkoutIsTheContractsWorkoutAndALockedOneHasNoVideo() throws {
        let wire = try CoreRecordContractTests.roundTrip(Self.workout, as: Components.Schemas.Workout.self)
        #expect(wire.id == Self.workout.id.description && wire._type == .yoga && wire.videoURL == "https://example.com/v.m3u8" && !wire.videoLocked)
        let withheld = try CoreRecordContractTests.roundTrip(Self.locked, as: Components.Schemas.Workout.self)
        #expect(withheld.videoURL == nil && withheld.videoLocked && withheld.isPremium)
    }

    @Test func todaysRecommendationsAreTheContractsDailyRecommendations() throws {
        let today = TodayRecommendations(
            day: CalendarDay("2026-03-14")!, phase: .luteal, cycleDay: 22, energy: .low,
            workouts: [RecommendedWorkout(priority: 1, reason: "Suits your luteal phase.", workout: Self.workout)],
            guidance: "Steady, moderate work.", lowEnergyAlternative: Self.locked, source: "llm", generatedAt: CoreRecordContractTests.instant
        )
        let wire = try CoreRecordContractTests.roundTrip(today, as: Components.Schemas.DailyRecommendations.self)
        #expect(wire.date == "2026-03-14" && wire.phase == .luteal && wire.cycleDay == 22 && wire.energy == .low && wire.source == .llm)
        #expect(wire.recommendations.map(\.priority) == [1] && wire.phaseGuidance == "Steady, moderate work.")
        #expect(wire.alternativeIfLowEnergy?.id == Self.locked.id.description)
        // What the server answers reads as the same record through the one bridge.
        #expect(try ContractJSON.record(TodayRecommendations.self, from: wire) == today)

        // Without cycle tracking or an energy answer, those fields are absent on both sides.
        let plain = TodayRecommendations(
            day: CalendarDay("2026-03-14")!, phase: nil, cycleDay: nil, energy: nil, workouts: [], guidance: "Move in a way that feels good.",
            lowEnergyAlternative: nil, source: "rules", generatedAt: CoreRecordContractTests.instant
        )
        let bare = try CoreRecordContractTests.roundTrip(plain, as: Components.Schemas.DailyRecommendations.self)
        #expect(bare.phase == nil && bare.cycleDay == nil && bare.energy == nil && bare.alternativeIfLowEnergy == nil)
    }

    @Test func anAnswerThatIsNotTodaysRecommendationsIsRefused() throws {
        let text = #"{"date":"2026-02-30","source":"rules","generatedAt":"2026-03-14T10:00:00Z","recommendations":[],"phaseGuidance":"x"}"#
        #expect(throws: DecodingError.self) { try ContractJSON.decoder.decode(TodayRecommendations.self, from: Data(text.utf8)) }
    }
}
