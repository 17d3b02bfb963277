import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Testing

/// Core's records are the SDK's: their JSON is the contract's, both ways, so the record an app saves is the body the
/// server's write path takes and the record it reads is what the server sends.
@Suite struct CoreRecordContractTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    static func keys(_ data: Data) throws -> Set<String> {
        Set(try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]).keys)
    }

    @Test func aPlanIsThePlanInputOfTheContractAndReadsItsTrainingPlan() throws {
        let workout = WorkoutID()
        let plan = TrainingPlan(
            name: "Spring block", notes: "Three a week", startDate: CalendarDay(year: 2026, month: 3, day: 2)!,
            endDate: CalendarDay(year: 2026, month: 3, day: 29)!, daysPerWeek: 3, isCompleted: true,
            weeklyWorkouts: [.init(week: 1, days: [.init(day: 1, workouts: [workout]), .init(day: 3, workouts: [])])]
        )
        let written = try Self.encoder.encode(plan)
        // What the SDK sends is a complete PlanInput, with nothing the contract does not name (and the id it is kept under).
        let input = try JSONDecoder().decode(Components.Schemas.PlanInput.self, from: written)
        #expect(input.name == "Spring block" && input.notes == "Three a week" && input.startDate == "2026-03-02" && input.endDate == "2026-03-29")
        #expect(input.daysPerWeek == 3 && input.isCompleted == true)
        #expect(input.weeklyWorkouts.map { $0.days.map(\.workoutIds) } == [[[workout.description], []]])
        #expect(try Self.keys(written).subtracting(["id"]) == Self.keys(try Self.encoder.encode(input)))

        // What the server sends reads back as the same plan (version and times are the server's, beside it).
        let served = Components.Schemas.TrainingPlan(
            id: plan.id.description, name: input.name, notes: input.notes, startDate: input.startDate, endDate: input.endDate,
            daysPerWeek: input.daysPerWeek, isCompleted: true,
            weeklyWorkouts: input.weeklyWorkouts.map { .init(week: $0.week, days: $0.days.map { .init(day: $0.day, workoutIds: $0.workoutIds) }) },
            version: 3, createdAt: .now, updatedAt: .now
        )
        #expect(try JSONDecoder().decode(TrainingPlan.self, from: try Self.encoder.encode(served)) == plan)
        #expect(try Self.keys(written).isSubset(of: Self.keys(try Self.encoder.encode(served))))
    }

    @Test func aPlanWithABadDayOrIdIsNotAPlan() throws {
        let text = #"{"id":"p1","name":"x","startDate":"2026-03-02","daysPerWeek":3,"isCompleted":false,"weeklyWorkouts":[]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TrainingPlan.self, from: Data(text.utf8)) }
        let day = #"{"id":"\#(PlanID())","name":"x","startDate":"2026-02-30","daysPerWeek":3,"isCompleted":false,"weeklyWorkouts":[]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TrainingPlan.self, from: Data(day.utf8)) }
    }

    @Test func aPeriodIsThePeriodInputOfTheContractAndReadsItsPeriod() throws {
        let period = Period(
            start: CalendarDay(year: 2026, month: 3, day: 2)!, end: CalendarDay(year: 2026, month: 3, day: 6)!, flow: .heavy, symptoms: ["cramps"],
            notes: "first day heavy"
        )
        let written = try Self.encoder.encode(period)
        let input = try JSONDecoder().decode(Components.Schemas.PeriodInput.self, from: written)
        #expect(input.startDate == "2026-03-02" && input.endDate == "2026-03-06" && input.flow == .heavy && input.symptoms == ["cramps"])
        #expect(try Self.keys(written).subtracting(["id"]) == Self.keys(try Self.encoder.encode(input)))

        let served = Components.Schemas.Period(
            id: period.id.description, startDate: input.startDate, endDate: input.endDate, flow: .heavy, symptoms: ["cramps"], notes: input.notes
        )
        #expect(try JSONDecoder().decode(Period.self, from: try Self.encoder.encode(served)) == period)
        #expect(try Self.keys(written) == Self.keys(try Self.encoder.encode(served)))
    }

    @Test func aWorkoutLogCarriesItsWorkoutLogInputAndReadsTheContractsWorkoutLog() throws {
        let log = WorkoutLog(
            id: WorkoutLogID(), workout: WorkoutID(), workoutType: .pilates, workoutTitle: "Core flow", completedAt: Date(timeIntervalSince1970: 1_800_000_000),
            localDate: CalendarDay(year: 2027, month: 1, day: 15)!, durationMinutes: 30, rating: 4, energyBefore: 2, energyAfter: 4, notes: "good",
            cyclePhase: .luteal, cycleDay: 20
        )
        let written = try Self.encoder.encode(log)
        // What the SDK pushes holds a whole WorkoutLogInput (the server takes those fields and fixes the rest).
        let input = try JSONDecoder.withInternetDates.decode(Components.Schemas.WorkoutLogInput.self, from: written)
        #expect(input.workoutId == log.workout.description && input.duration == 30 && input.rating == 4 && input.notes == "good")
        #expect(try Self.keys(Self.encoder.encode(input)).isSubset(of: Self.keys(written)))
        // …and is exactly the contract's WorkoutLog, which reads back as the same log.
        let served = try JSONDecoder.withInternetDates.decode(Components.Schemas.WorkoutLog.self, from: written)
        #expect(served.workoutType == .pilates && served.localDate == "2027-01-15" && served.cyclePhase == .luteal && served.cycleDay == 20)
        #expect(try Self.keys(written) == Self.keys(try Self.encoder.encode(served)))
        #expect(try JSONDecoder.withInternetDates.decode(WorkoutLog.self, from: try Self.encoder.encode(served)) == log)
    }

    /// The contract's named enums are Core's own types (the generator's overrides): the document lists exactly Core's
    /// values for each, and the pushed operation's generated enum has Core's cases.
    @Test func theContractsEnumsAreCores() throws {
        let enums: [(String, [String])] = [
            ("HealthSampleType", HealthSampleType.allCases.map(\.rawValue)), ("SubscriptionTier", SubscriptionTier.allCases.map(\.rawValue)),
            ("Feature", Feature.allCases.map(\.rawValue)), ("EntitlementStatus", EntitlementStatus.allCases.map(\.rawValue)),
            ("EntitlementSource", EntitlementSource.allCases.map(\.rawValue)), ("FitnessLevel", FitnessLevel.allCases.map(\.rawValue)),
            ("FitnessGoal", FitnessGoal.allCases.map(\.rawValue)), ("WorkoutType", WorkoutType.allCases.map(\.rawValue)),
            ("CyclePhase", CyclePhase.allCases.map(\.rawValue)), ("Intensity", Intensity.allCases.map(\.rawValue)),
            ("Equipment", Equipment.allCases.map(\.rawValue)), ("TargetArea", TargetArea.allCases.map(\.rawValue)),
            ("EnergyLevel", EnergyLevel.allCases.map(\.rawValue)), ("SyncCollection", SyncCollection.allCases.map(\.rawValue)),
            ("PeriodFlow", PeriodFlow.allCases.map(\.rawValue)), ("GroupRole", GroupRole.allCases.map(\.rawValue)),
            ("NotificationKind", NotificationKind.allCases.map(\.rawValue)), ("ChallengeKind", ChallengeKind.allCases.map(\.rawValue)),
            ("ConsentKind", ConsentKind.allCases.map(\.rawValue)), ("ProblemCode", ProblemCode.allCases.map(\.rawValue)),
            ("PredictionConfidence", CyclePredictor.Confidence.allCases.map(\.rawValue)), ("CyclePattern", CyclePredictor.Pattern.allCases.map(\.rawValue)),
            ("SleepStage", SleepStage.allCases.map(\.rawValue)), ("HealthSummaryBucketSize", HealthSummaryBucketSize.allCases.map(\.rawValue)),
            ("ProgressionAction", PlanProgression.Action.allCases.map(\.rawValue)), ("EnergyTrend", PlanProgression.EnergyTrend.allCases.map(\.rawValue)),
            ("FertilitySignalType", FertilitySignalType.allCases.map(\.rawValue)), ("TemperatureUnit", TemperatureUnit.allCases.map(\.rawValue)),
            ("OvulationSource", CyclePredictor.OvulationSource.allCases.map(\.rawValue)), ("PredictionMethod", CyclePredictor.Method.allCases.map(\.rawValue)),
        ]
        for (schema, core) in enums {
            let contract = try contractEnum(schema)
            #expect(!contract.isEmpty && Set(contract) == Set(core) && contract.count == core.count, "\(schema): the contract lists \(contract)")
        }
        #expect(Set(Components.Schemas.SyncMutation.OpPayload.allCases.map(\.rawValue)) == Set(SyncOperation.allCases.map(\.rawValue)))
    }

    /// Encodes `record`, reads it as the contract's `Wire`, and reads the wire value's JSON back as the record: both
    /// directions hold the same fields under the same names.
    static func roundTrip<Record: Codable & Equatable, Wire: Codable>(_ record: Record, as wire: Wire.Type) throws -> Wire {
        let written = try encoder.encode(record)
        let served = try JSONDecoder.withInternetDates.decode(Wire.self, from: written)
        let echoed = try encoder.encode(served)
        #expect(try keys(written) == keys(echoed))
        #expect(try JSONDecoder.withInternetDates.decode(Record.self, from: echoed) == record)
        return served
    }

    static let instant = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aFertilitySignalIsTheContractsFertilitySignal() throws {
        let temperature = FertilitySignal(date: CalendarDay("2026-03-14")!, reading: .basalBodyTemperature(celsius: 36.72))
        let wire = try Self.roundTrip(temperature, as: Components.Schemas.FertilitySignal.self)
        #expect(wire.id == temperature.id.description && wire._type == .basalBodyTemperature && wire.value == 36.72 && wire.unit == .celsius)
        let strip = FertilitySignal(date: CalendarDay("2026-03-14")!, reading: .lhTest(.positive))
        #expect(try Self.roundTrip(strip, as: Components.Schemas.FertilitySignal.self).result == "positive")
    }

    @Test func aGroupIsTheContractsGroup() throws {
        let group = SocialGroup(id: GroupID(), name: "Morning Movers", timeZone: "Europe/Berlin", memberCount: 4, createdAt: Self.instant, role: .admin)
        let wire = try Self.roundTrip(group, as: Components.Schemas.Group.self)
        #expect(wire.id == group.id.description && wire.role == .admin && wire.memberCount == 4 && wire.timeZone == "Europe/Berlin")
    }

    @Test func aMemberIsTheContractsGroupMember() throws {
        let member = GroupMember(user: UserID(), displayName: "Bea", photoURL: "https://example.com/b.png", role: .member, joinedAt: Self.instant)
        let wire = try Self.roundTrip(member, as: Components.Schemas.GroupMember.self)
        #expect(wire.userId == member.user.description && wire.displayName == "Bea" && wire.role == .member)
        let unnamed = GroupMember(user: UserID(), displayName: "Member 1234", role: .admin, joinedAt: Self.instant)
        #expect(try Self.roundTrip(unnamed, as: Components.Schemas.GroupMember.self).photoURL == nil)
    }

    @Test func aLeaderboardEntryIsTheContractsLeaderboardEntry() throws {
        let entry = LeaderboardEntry(user: UserID(), displayName: "Carla", value: 5, rank: 2, reachedAt: Self.instant)
        let wire = try Self.roundTrip(entry, as: Components.Schemas.LeaderboardEntry.self)
        #expect(wire.userId == entry.user.description && wire.value == 5 && wire.rank == 2 && wire.reachedAt == Self.instant)
    }

    @Test func aFeedNotificationIsTheContractsNotification() throws {
        let notification = FeedNotification(
            id: NotificationID(), kind: .rankChange, group: GroupID(), message: "You moved up", isRead: false, createdAt: Self.instant)
        let wire = try Self.roundTrip(notification, as: Components.Schemas.Notification.self)
        #expect(wire.id == notification.id.description && wire._type == .rankChange && wire.groupId == notification.group?.description)
        let general = FeedNotification(id: NotificationID(), kind: .weekEnded, group: nil, message: "Week over", isRead: true, createdAt: Self.instant)
        #expect(try Self.roundTrip(general, as: Components.Schemas.Notification.self).groupId == nil)
    }

    @Test func aHealthSampleIsTheContractsHealthSample() throws {
        let start = Self.instant
        let samples = [
            HealthSample(
                id: HealthSampleID(), value: .heartRate(beatsPerMinute: 72), start: start, sourceId: "com.apple.health", device: "Watch7,1",
                metadata: ["HKWasUserEntered": "0"]),
            HealthSample(id: HealthSampleID(), value: .steps(count: 412), start: start, end: start + 600, sourceId: "com.apple.health"),
            HealthSample(id: HealthSampleID(), value: .sleep(stage: .asleepREM), start: start, end: start + 1_800, sourceId: "com.apple.health"),
            HealthSample(id: HealthSampleID(), value: .oxygenSaturation(percent: 97.5), start: start, sourceId: "com.apple.health"),
            HealthSample(id: HealthSampleID(), value: .bloodPressure(systolic: 118, diastolic: 76), start: start, sourceId: "com.omron"),
        ]
        for sample in samples {
            let wire = try Self.roundTrip(sample, as: Components.Schemas.HealthSample.self)
            #expect(wire.id == sample.id.description && wire._type == sample.type && wire.unit == sample.type.canonicalUnit)
            #expect(wire.start == sample.start && wire.end == sample.end && wire.sourceId == sample.sourceId && wire.device == sample.device)
            #expect(wire.metadata?.additionalProperties == sample.metadata)
            switch sample.value {
            case .heartRate(let number), .steps(let number), .oxygenSaturation(let number):
                #expect(wire.value == number && wire.systolic == nil && wire.diastolic == nil && wire.stage == nil)
            case .sleep(let stage): #expect(wire.stage == stage && wire.value == nil)
            case .bloodPressure(let systolic, let diastolic): #expect(wire.systolic == systolic && wire.diastolic == diastolic && wire.value == nil)
            }
        }

        // What the server sends (HealthWire) reads as the same sample, and writes back as the same JSON.
        let id = HealthSampleID()
        let served = Components.Schemas.HealthSample(
            id: id.description, _type: .bloodPressure, unit: "mmHg", systolic: 121, diastolic: 79, start: start, end: start, sourceId: "com.omron",
            metadata: .init(additionalProperties: ["cuff": "upper arm"]))
        let servedJSON = try Self.encoder.encode(served)
        let read = try JSONDecoder.withInternetDates.decode(HealthSample.self, from: servedJSON)
        #expect(read == HealthSample(id: id, value: .bloodPressure(systolic: 121, diastolic: 79), start: start, end: start, sourceId: "com.omron", metadata: ["cuff": "upper arm"]))
        #expect(try Self.encoder.encode(read) == servedJSON)
        let sleep = Components.Schemas.HealthSample(id: HealthSampleID().description, _type: .sleep, stage: .awake, start: start, end: start + 60, sourceId: "s")
        #expect(try JSONDecoder.withInternetDates.decode(HealthSample.self, from: try Self.encoder.encode(sleep)).value == .sleep(stage: .awake))
    }

    @Test func aHealthSampleWithoutItsValueOrInAnotherUnitIsNotASample() throws {
        let id = HealthSampleID().description
        func decoded(_ fields: String) throws -> HealthSample {
            let text = #"{"id":"\#(id)","start":"2027-01-15T08:00:00Z","sourceId":"s",\#(fields)}"#
            return try JSONDecoder.withInternetDates.decode(HealthSample.self, from: Data(text.utf8))
        }
        #expect(try decoded(#""type":"heartRate","value":61"#).value == .heartRate(beatsPerMinute: 61))
        for fields in [
            #""type":"bodyTemperature","value":37"#, #""type":"heartRate","value":61,"unit":"Hz""#, #""type":"heartRate","systolic":61"#,
            #""type":"bloodPressure","value":120,"unit":"mmHg""#, #""type":"bloodPressure","systolic":120,"diastolic":80,"unit":"kPa""#,
            #""type":"sleep","stage":"napping""#, #""type":"sleep","stage":"awake","unit":"count""#,
        ] {
            #expect(throws: DecodingError.self, "\(fields)") { try decoded(fields) }
        }
    }

    @Test func aRecordWithAnIdThatIsNotOneIsNotARecord() throws {
        let text = #"{"userId":"u1","displayName":"A","role":"member","joinedAt":"2027-01-15T08:00:00Z"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder.withInternetDates.decode(GroupMember.self, from: Data(text.utf8)) }
        let kind = #"{"id":"\#(NotificationID())","type":"poke","message":"m","isRead":false,"createdAt":"2027-01-15T08:00:00Z"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder.withInternetDates.decode(FeedNotification.self, from: Data(kind.utf8)) }
    }
}

extension JSONDecoder {
    /// A decoder reading RFC 3339 instants, as the generated types write them here.
    static var withInternetDates: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
