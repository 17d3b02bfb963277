import FitBaseCore
import Foundation

/// The catalog's orders.
public enum WorkoutSort: String, Sendable, Equatable, CaseIterable {
    /// Featured first, then by title (the default).
    case featured
    case newest, title, shortest, longest
}

/// What the workout library shows: filters that combine with AND, a search and an order.
public struct WorkoutFilter: Sendable, Equatable, Hashable {
    /// Any of these types (empty: all).
    public var types: Set<WorkoutType>
    public var intensity: Intensity?
    public var phase: CyclePhase?
    /// What the user has: keeps workouts needing nothing else (empty: no equipment filter).
    public var equipment: Set<Equipment>
    /// Minutes, inclusive.
    public var minDuration: Int?
    public var maxDuration: Int?
    public var targetArea: TargetArea?
    /// Only featured workouts.
    public var featuredOnly: Bool
    /// Only premium (`true`) or only free (`false`) workouts; `nil`: both.
    public var premium: Bool?
    /// Words to search title, description, tags and instructor for (word prefixes, all required).
    public var search: String?
    public var sort: WorkoutSort

    /// Makes a filter; the default shows everything, featured first.
    public init(
        types: Set<WorkoutType> = [], intensity: Intensity? = nil, phase: CyclePhase? = nil, equipment: Set<Equipment> = [], minDuration: Int? = nil,
        maxDuration: Int? = nil, targetArea: TargetArea? = nil, featuredOnly: Bool = false, premium: Bool? = nil, search: String? = nil,
        sort: WorkoutSort = .featured
    ) {
        self.types = types
        self.intensity = intensity
        self.phase = phase
        self.equipment = equipment
        self.minDuration = minDuration
        self.maxDuration = maxDuration
        self.targetArea = targetArea
        self.featuredOnly = featuredOnly
        self.premium = premium
        self.search = search
        self.sort = sort
    }

    /// Everything, featured first.
    public static let all = WorkoutFilter()
}

/// A workout as its detail screen shows it.
public struct WorkoutDetail: Sendable, Equatable {
    /// The workout (its `videoURL` is empty when locked).
    public var workout: CatalogWorkout
    /// The video is withheld: the user is not entitled to premium content.
    public var isVideoLocked: Bool
    /// The tier that unlocks the video, when locked.
    public var requiredTier: SubscriptionTier? { isVideoLocked ? .premium : nil }

    /// Makes a detail value.
    public init(workout: CatalogWorkout, isVideoLocked: Bool) {
        self.workout = workout
        self.isVideoLocked = isVideoLocked
    }
}

/// The workout library (seed 001): filters, paging, search and detail, and the multi-week programs — cache-first, so
/// the library opens offline.
public protocol CatalogService: Sendable {
    /// A page of the workouts `filter` keeps, in its order.
    func workouts(matching filter: WorkoutFilter, page: PageRequest, policy: CachePolicy) async throws(KitError) -> Loaded<Page<CatalogWorkout>>
    /// The featured workouts.
    func featured(policy: CachePolicy) async throws(KitError) -> Loaded<[CatalogWorkout]>
    /// One workout.
    func workout(id: WorkoutID, policy: CachePolicy) async throws(KitError) -> Loaded<WorkoutDetail>
    /// A page of the programs, by title.
    func programs(page: PageRequest, policy: CachePolicy) async throws(KitError) -> Loaded<Page<CatalogProgram>>
    /// One program with its workouts week by week.
    func program(id: ProgramID, policy: CachePolicy) async throws(KitError) -> Loaded<CatalogProgram>
}

extension CatalogService {
    /// The workouts `ids` name, each asked for once and all at a time (cache-first with `policy`); an id no longer
    /// in the catalog is left out. Fails with the first failure in the order of `ids`, if any other.
    public func workouts(ids: [WorkoutID], policy: CachePolicy) async throws(KitError) -> [WorkoutID: WorkoutDetail] {
        var unique: [WorkoutID] = []
        for id in ids where !unique.contains(id) { unique.append(id) }
        let answers = await withTaskGroup(of: (WorkoutID, Result<WorkoutDetail, KitError>).self) { group in
            for id in unique {
                group.addTask {
                    do throws(KitError) {
                        return (id, .success(try await self.workout(id: id, policy: policy).value))
                    } catch {
                        return (id, .failure(error))
                    }
                }
            }
            var answers: [WorkoutID: Result<WorkoutDetail, KitError>] = [:]
            for await (id, answer) in group { answers[id] = answer }
            return answers
        }
        var found: [WorkoutID: WorkoutDetail] = [:]
        for id in unique {
            switch answers[id] {
            case .success(let detail): found[id] = detail
            case .failure(let error) where error.kind != .notFound: throw error
            case .failure, nil: continue
            }
        }
        return found
    }
}
