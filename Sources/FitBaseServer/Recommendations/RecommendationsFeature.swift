import FitBaseCore
import Logging

/// Today's and the week's recommendations, from the rules or the configured language model.
struct RecommendationsFeature: ServerFeature {
    /// How far back history counts as recent.
    static let recentDays = 14
    /// How many of the rules' best workouts the language model chooses from.
    static let modelCandidates = 15

    let store: RecommendationStore
    let catalog: CatalogStore
    let history: HistoryStore
    let profiles: ProfileStore
    let cycle: CycleReckoner
    let premiumAccess: any PremiumContentAccess
    /// `nil` without `FITBASE_ANTHROPIC_API_KEY`: the rules answer alone.
    let model: (any LanguageModel)?
    /// Answers a day one account may have from `model`: `free`, and `premium` on a paid tier.
    let modelCallsPerDay: (free: Int, premium: Int)
    /// Model calls a day across all accounts (`FITBASE_ANTHROPIC_DAILY_BUDGET`).
    let modelBudgetPerDay: Int
    let logger: Logger
    let engine = RecommendationEngine()
    private let vault: HealthVault

    init(_ foundation: ServerFoundation, catalog: CatalogFeature, cycle: CycleFeature, history: HistoryFeature, billing: BillingFeature) {
        let settings = foundation.configuration.languageModel
        store = RecommendationStore(database: foundation.database, vault: foundation.vault)
        self.catalog = catalog.store
        self.history = history.history
        profiles = foundation.profiles
        self.cycle = cycle.reckoner
        premiumAccess = billing.entitlements
        model = settings.map { AnthropicMessagesModel(client: foundation.httpClient, configuration: $0) }
        modelCallsPerDay = (settings?.dailyCallsFree ?? 0, settings?.dailyCallsPremium ?? 0)
        modelBudgetPerDay = settings?.dailyBudget ?? 0
        logger = foundation.logger
        vault = foundation.vault
    }

    var dataOwners: [any AccountDataOwner] { [DailyRecommendationsOwner(vault: vault)] }
}
