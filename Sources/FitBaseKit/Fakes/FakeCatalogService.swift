import FitBaseCore
import Foundation

/// An in-memory ``CatalogService`` over canned workouts and programs, filtering, searching, sorting and paging as the
/// server does.
/// Premium videos are locked unless the billing fake's entitlement includes premium content.
public actor FakeCatalogService: CatalogService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case workouts, featured, workout, programs, program
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeCatalogService")
    private let clock: any KitClock
    private let billing: FakeBillingService?
    /// The catalog (replace it to show other content).
    public var catalog: [CatalogWorkout]
    /// The programs, in any order (listed by title).
    public var programs: [CatalogProgram]

    /// A fake over `workouts` and `programs` (the canned ones by default); `billing` decides premium access (none:
    /// locked).
    public init(
        workouts: [CatalogWorkout] = FakeData.workouts, programs: [CatalogProgram] = FakeData.programs, billing: FakeBillingService? = nil,
        clock: any KitClock = SystemKitClock()
    ) {
        self.catalog = workouts
        self.programs = programs
        self.billing = billing
        self.clock = clock
    }

    /// Replaces the catalog.
    public func setCatalog(_ workouts: [CatalogWorkout]) {
        catalog = workouts
    }

    private func loaded<Value>(_ value: Value, _ policy: CachePolicy) -> Loaded<Value> {
        Loaded(value, source: policy == .cacheOnly ? .cache : .server, fetchedAt: clock.now)
    }

    public func workouts(matching filter: WorkoutFilter, page: PageRequest, policy: CachePolicy) async throws(KitError) -> Loaded<Page<CatalogWorkout>> {
        try await knobs.enter(.workouts, clock: clock)
        let entitled = await premiumEntitled()
        let matching = CatalogQuery.apply(filter, to: catalog).map { Self.locking($0, entitled: entitled) }
        return loaded(try Self.slice(matching, page), policy)
    }

    public func featured(policy: CachePolicy) async throws(KitError) -> Loaded<[CatalogWorkout]> {
        try await knobs.enter(.featured, clock: clock)
        let entitled = await premiumEntitled()
        return loaded(catalog.filter(\.isFeatured).map { Self.locking($0, entitled: entitled) }, policy)
    }

    public func workout(id: WorkoutID, policy: CachePolicy) async throws(KitError) -> Loaded<WorkoutDetail> {
        try await knobs.enter(.workout, clock: clock)
        guard let workout = catalog.first(where: { $0.id == id }) else {
            throw KitError(.notFound, message: "This workout is no longer in the library.", code: .notFound)
        }
        let entitled = await premiumEntitled()
        let locked = workout.isPremium && !entitled
        return loaded(WorkoutDetail(workout: Self.locking(workout, entitled: entitled), isVideoLocked: locked), policy)
    }

    public func programs(page: PageRequest, policy: CachePolicy) async throws(KitError) -> Loaded<Page<CatalogProgram>> {
        try await knobs.enter(.programs, clock: clock)
        let sorted = programs.sorted { ($0.title, $0.id.description) < ($1.title, $1.id.description) }
        return loaded(try Self.slice(sorted, page), policy)
    }

    public func program(id: ProgramID, policy: CachePolicy) async throws(KitError) -> Loaded<CatalogProgram> {
        try await knobs.enter(.program, clock: clock)
        guard let program = programs.first(where: { $0.id == id }) else {
            throw KitError(.notFound, message: "This program is no longer in the library.", code: .notFound)
        }
        return loaded(program, policy)
    }

    /// The page of `items` that `page` asks for; the cursor is the offset.
    private static func slice<Item: Sendable>(_ all: [Item], _ page: PageRequest) throws(KitError) -> Page<Item> {
        let offset = page.cursor.flatMap(Int.init) ?? 0
        guard offset >= 0, page.limit > 0 else { throw KitError(.invalidInput, fieldErrors: ["cursor": "is not a cursor of this list"]) }
        let items = Array(all.dropFirst(offset).prefix(page.limit))
        let next = offset + items.count < all.count ? String(offset + items.count) : nil
        return Page(items: items, nextCursor: next)
    }

    /// Whether the billing fake's entitlement includes premium content, read by the other fakes (not an operation).
    func premiumEntitled() async -> Bool {
        await billing?.requiresUpgrade(for: .premiumContent) == nil && billing != nil
    }

    /// `workout` as a caller entitled (or not) to premium content sees it: a premium video is withheld without.
    static func locking(_ workout: CatalogWorkout, entitled: Bool) -> CatalogWorkout {
        guard workout.isPremium, !entitled else { return workout }
        var locked = workout
        locked.videoURL = ""
        return locked
    }
}

/// The catalog's filters and orders applied in memory, as the server applies them (the fake, and the live service
/// when it answers from its cache offline).
enum CatalogQuery {
    static func apply(_ filter: WorkoutFilter, to workouts: [CatalogWorkout]) -> [CatalogWorkout] {
        let words = (filter.search ?? "").lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        let kept = workouts.filter { workout in
            (filter.types.isEmpty || filter.types.contains(workout.type))
                && (filter.intensity.map { $0 == workout.intensity } ?? true)
                && (filter.phase.map { workout.phases.contains($0) } ?? true)
                && (filter.equipment.isEmpty || workout.canBeDone(with: filter.equipment))
                && (filter.minDuration.map { workout.durationMinutes >= $0 } ?? true)
                && (filter.maxDuration.map { workout.durationMinutes <= $0 } ?? true)
                && (filter.targetArea.map { workout.targetAreas.contains($0) } ?? true)
                && (!filter.featuredOnly || workout.isFeatured)
                && (filter.premium.map { $0 == workout.isPremium } ?? true)
                && matches(words, workout)
        }
        return kept.sorted(by: order(filter.sort))
    }

    private static func matches(_ words: [String], _ workout: CatalogWorkout) -> Bool {
        guard !words.isEmpty else { return true }
        let text = ([workout.title, workout.description, workout.instructorName] + workout.tags).joined(separator: " ").lowercased()
        let vocabulary = text.split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        return words.allSatisfy { word in vocabulary.contains { $0.hasPrefix(word) } }
    }

    private static func order(_ sort: WorkoutSort) -> (CatalogWorkout, CatalogWorkout) -> Bool {
        switch sort {
        case .featured: { ($0.isFeatured ? 0 : 1, $0.title, $0.id.description) < ($1.isFeatured ? 0 : 1, $1.title, $1.id.description) }
        case .newest: { $0.id.description > $1.id.description }
        case .title: { ($0.title, $0.id.description) < ($1.title, $1.id.description) }
        case .shortest: { ($0.durationMinutes, $0.title) < ($1.durationMinutes, $1.title) }
        case .longest: { ($0.durationMinutes, $1.title) > ($1.durationMinutes, $0.title) }
        }
    }
}
