import FitBaseClient
import FitBaseCore
import Foundation

/// The canned content the fakes start with (the seeds' mock data, made consistent with each other).
public enum FakeData {
    /// The signed-in user of the populated and empty scenarios.
    public static let user = SignedInUser(id: UserID("00000000-0000-4000-8000-0000000000a1")!, email: "ana@example.com", displayName: "Ana", emailVerified: true)
    /// Ana's password in the fakes.
    public static let password = "correct horse battery"

    /// A deterministic id: `00000000-0000-4000-8000-` followed by `number` in 12 hex digits.
    public static func uuid(_ number: Int) -> UUID {
        let hex = String(number, radix: 16)
        return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex)!
    }

    /// A filled-in profile (tracking the cycle, sharing workouts).
    public static let profile = Profile(
        displayName: "Ana", fitnessLevel: .intermediate, goals: [.buildStrength, .hormoneBalance], preferredWorkoutTypes: [.strength, .pilates, .yoga],
        averageCycleLength: 28, averagePeriodLength: 5, lastPeriodStartDate: nil, cycleTrackingEnabled: true, notificationsEnabled: true,
        preferredWorkoutTime: "07:30", timeZone: "UTC", shareWorkoutData: true, availableEquipment: [.none, .dumbbells, .yogaMat]
    )

    /// Fourteen workouts across the types, phases and intensities; four are premium, three featured.
    public static let workouts: [CatalogWorkout] = {
        let rows: [(String, WorkoutType, Int, Intensity, [CyclePhase], [Equipment], Bool, Bool, [TargetArea])] = [
            ("Gentle Morning Flow", .yoga, 20, .low, [.menstrual, .luteal], [.yogaMat], true, false, [.fullBody]),
            ("Restorative Stretch", .gentleStretch, 15, .low, [.menstrual], [.none], false, false, [.fullBody, .back]),
            ("Walking Pilates Basics", .walkingPilates, 25, .low, [.menstrual, .follicular], [.none], false, false, [.lowerBody, .core]),
            ("Breath and Stillness", .meditation, 10, .low, CyclePhase.allCases, [.none], false, false, [.fullBody]),
            ("Full Body Strength Builder", .strength, 35, .medium, [.follicular, .luteal], [.dumbbells], true, false, [.fullBody]),
            ("Core Pilates", .pilates, 30, .medium, [.follicular, .luteal], [.yogaMat], false, false, [.core]),
            ("Barre Sculpt", .barre, 30, .medium, [.follicular, .ovulatory], [.barreOrChair], false, true, [.lowerBody, .glutes]),
            ("Upper Body Strength", .strength, 30, .medium, [.follicular, .ovulatory], [.dumbbells], false, false, [.upperBody, .arms]),
            ("Power Pilates Burn", .powerPilates, 40, .high, [.ovulatory], [.yogaMat], false, true, [.core, .glutes]),
            ("HIIT Strength Intervals", .hiitStrength, 30, .high, [.ovulatory], [.dumbbells], true, true, [.fullBody]),
            ("Lower Body Power", .strength, 45, .high, [.ovulatory, .follicular], [.kettlebell], false, false, [.lowerBody, .glutes]),
            ("Steady Luteal Pilates", .pilates, 25, .medium, [.luteal], [.yogaMat], false, false, [.core, .back]),
            ("Resistance Band Barre", .barre, 20, .low, [.luteal, .menstrual], [.resistanceBands], false, false, [.glutes, .arms]),
            ("Yin Yoga Wind Down", .yoga, 40, .low, [.luteal, .menstrual], [.yogaMat], false, true, [.fullBody, .back]),
        ]
        return rows.enumerated().map { index, row in
            let (title, type, minutes, intensity, phases, equipment, featured, premium, areas) = row
            return CatalogWorkout(
                id: WorkoutID(rawValue: uuid(0x100 + index)), title: title,
                description: "\(title): a \(minutes)-minute \(type.displayName.lowercased()) session.", type: type, durationMinutes: minutes,
                intensity: intensity, phases: phases, equipment: equipment, thumbnailURL: "https://media.example.com/thumbs/\(index + 1).jpg",
                videoURL: "https://media.example.com/videos/\(index + 1).m3u8", instructorName: ["Maya", "Lena", "Sofia"][index % 3],
                tags: [type.rawValue, intensity.rawValue], isFeatured: featured, isPremium: premium, targetAreas: areas,
                benefits: ["Builds consistency", "Matches your \(phases[0].displayName.lowercased()) phase"]
            )
        }
    }()

    /// Three programs of the canned workouts: a free beginner one, a free intermediate one and a premium advanced one.
    public static let programs: [CatalogProgram] = {
        func ids(_ indexes: [Int]) -> [WorkoutID] { indexes.map { workouts[$0].id } }
        return [
            CatalogProgram(
                id: ProgramID(rawValue: uuid(0x800)), title: "Strength Foundations", description: "Three weeks of simple strength and mobility.",
                level: .beginner, isPremium: false, weeks: [ids([0, 4, 1]), ids([2, 4, 5]), ids([4, 7, 5, 3])]
            ),
            CatalogProgram(
                id: ProgramID(rawValue: uuid(0x801)), title: "Cycle-Synced Month", description: "Four weeks that follow the phases.",
                level: .intermediate, isPremium: true, weeks: [ids([1, 2, 12]), ids([5, 6, 4]), ids([8, 9, 10]), ids([11, 13, 0])]
            ),
            CatalogProgram(
                id: ProgramID(rawValue: uuid(0x802)), title: "Barre and Pilates Basics", description: "Two weeks of barre and Pilates.",
                level: .intermediate, isPremium: false, weeks: [ids([6, 5]), ids([12, 11, 2])]
            ),
        ]
    }()

    /// Four periods about 28 days apart, the last one starting `daysAgo` days before `today`.
    public static func periods(today: CalendarDay, lastStartedDaysAgo daysAgo: Int = 9) -> [Period] {
        let lengths = [29, 27, 28]
        var start = today.adding(days: -daysAgo)
        var periods: [Period] = [Period(id: PeriodID(rawValue: uuid(0x200)), start: start, end: start.adding(days: 4), flow: .medium)]
        for (index, length) in lengths.enumerated() {
            start = start.adding(days: -length)
            periods.append(Period(id: PeriodID(rawValue: uuid(0x201 + index)), start: start, end: start.adding(days: 4), flow: .medium))
        }
        return periods.reversed()
    }

    /// About three workouts a week for six weeks before `now`, ending yesterday.
    public static func history(now: Date) -> [LoggedWorkout] {
        let offsets = [1, 2, 4, 6, 8, 9, 11, 14, 16, 18, 21, 23, 25, 28, 30, 32, 35, 38, 40]
        return offsets.enumerated().map { index, daysAgo in
            let workout = workouts[index % workouts.count]
            let completedAt = now.addingTimeInterval(-Double(daysAgo) * 86_400)
            return LoggedWorkout(log: WorkoutLog(
                id: WorkoutLogID(rawValue: uuid(0x300 + index)), workout: workout.id, workoutType: workout.type, workoutTitle: workout.title,
                completedAt: completedAt, localDate: CalendarDay(completedAt, in: .gmt), durationMinutes: workout.durationMinutes,
                rating: 3 + index % 3, energyBefore: 2 + index % 3, energyAfter: 3 + index % 3, notes: nil, cyclePhase: workout.phases.first, cycleDay: nil
            ))
        }
    }

    /// A plan of four weeks starting `start`.
    public static func plan(start: CalendarDay) -> TrainingPlan {
        let days = [1, 3, 5].enumerated().map { index, day in
            TrainingPlan.Day(day: day, workouts: [workouts[(index * 4) % workouts.count].id])
        }
        return TrainingPlan(
            id: PlanID(rawValue: uuid(0x400)), name: "Cycle-Synced Strength", notes: "Three sessions a week", startDate: start,
            daysPerWeek: 3, weeklyWorkouts: (1...4).map { TrainingPlan.Week(week: $0, days: days) }
        )
    }

    /// The group Ana administers, with five members.
    public static func group(now: Date) -> (SocialGroup, [GroupMember]) {
        let names = ["Ana", "Bea", "Carla", "Dani", "Eva"]
        let members = names.enumerated().map { index, name in
            GroupMember(
                user: index == 0 ? user.id : UserID(rawValue: uuid(0x500 + index)), displayName: name, role: index == 0 ? .admin : .member,
                joinedAt: now.addingTimeInterval(-Double(30 - index) * 86_400)
            )
        }
        let group = SocialGroup(
            id: GroupID(rawValue: uuid(0x600)), name: "Morning Movers", timeZone: "UTC", memberCount: members.count,
            createdAt: now.addingTimeInterval(-30 * 86_400), role: .admin
        )
        return (group, members)
    }

    /// A mix of read and unread notifications, newest first.
    public static func notifications(now: Date, groupID: GroupID) -> [FeedNotification] {
        let rows: [(NotificationKind, String, Bool)] = [
            (.rankChange, "You moved up to 2nd place in check-ins!", false),
            (.newMember, "Eva joined Morning Movers.", false),
            (.weekEnded, "The week is over: Bea won with 5 check-ins.", true),
            (.newMember, "Dani joined Morning Movers.", true),
        ]
        return rows.enumerated().map { index, row in
            FeedNotification(
                id: NotificationID(rawValue: uuid(0x700 + index)), kind: row.0, group: groupID, message: row.1, isRead: row.2,
                createdAt: now.addingTimeInterval(-Double(index + 1) * 3 * 3_600)
            )
        }
    }

    /// Fourteen days of samples of every metric before `now`: a few heart rates, SpO2 and blood pressures a day, a day's
    /// steps, a night's sleep.
    public static func healthSamples(now: Date) -> [HealthSample] {
        var samples: [HealthSample] = []
        var number = 0x1000
        func next() -> HealthSampleID {
            number += 1
            return HealthSampleID(rawValue: uuid(number))
        }
        for dayOffset in 1...14 {
            let day = now.addingTimeInterval(-Double(dayOffset) * 86_400)
            let wobble = Double(dayOffset % 5)
            for hour in [8.0, 13.0, 19.0] {
                let at = day.addingTimeInterval(hour * 3_600 - 12 * 3_600)
                samples.append(HealthSample(id: next(), value: .heartRate(beatsPerMinute: 62 + wobble * 3 + hour / 2), start: at, sourceId: "com.apple.health"))
            }
            samples.append(HealthSample(id: next(), value: .oxygenSaturation(percent: 96 + wobble / 2), start: day, sourceId: "com.apple.health"))
            samples.append(
                HealthSample(id: next(), value: .bloodPressure(systolic: 112 + wobble * 2, diastolic: 72 + wobble), start: day, sourceId: "com.omron"))
            samples.append(
                HealthSample(
                    id: next(), value: .steps(count: 6_000 + wobble * 900), start: day.addingTimeInterval(-10 * 3_600),
                    end: day.addingTimeInterval(2 * 3_600), sourceId: "com.apple.health"))
            let bedtime = day.addingTimeInterval(-20 * 3_600)
            samples.append(
                HealthSample(
                    id: next(), value: .sleep(stage: .asleepCore), start: bedtime, end: bedtime.addingTimeInterval((6.5 + wobble / 4) * 3_600),
                    sourceId: "com.apple.health"))
        }
        return samples
    }
}
