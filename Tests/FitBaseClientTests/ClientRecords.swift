import FitBaseClient

/// The SDK's record types under names that do not clash with the server's (imported `@testable` elsewhere).
typealias ClientPlan = TrainingPlan
