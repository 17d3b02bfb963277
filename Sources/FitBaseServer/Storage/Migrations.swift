import Logging

/// Every migration of the server, in the order they are applied. Append only.
enum FitBaseMigrations {
    static let all: [any Migration] = [
        CreateUsers(),
        CreateSessions(),
        CreateSignInFailures(),
        CreateUserProfiles(),
        CreateConsents(),
        CreateUserIdentities(),
        CreateCatalog(),
        CreateCyclePeriods(),
        CreateWorkoutLogs(),
        CreateTrainingPlans(),
        AddAvailableEquipment(),
        CreateDailyRecommendations(),
        CreateSyncFeed(),
        CreateSubscriptions(),
        CreateHealthSamples(),
        CreateHealthAuditLog(),
        AddPhotoURL(),
        CreateGroups(),
        CreateChallenges(),
        CreateEvents(),
        AddEmailVerification(),
        CreateAccountTokens(),
        CreateRateLimits(),
        CreateTrustedDevices(),
        CreateAppleNotificationReceipts(),
        CreateOutbox(),
        CreateSigningKeys(),
        CreateCacheGenerations(),
        CreateHealthRollups(),
        MoveHealthSampleFeedEntries(),
        AddInviteLimits(),
        AddRecommendationVariants(),
        SealCyclePeriods(),
        SealWorkoutLogFields(),
        ChainAuditPerUser(),
        AddNotificationPreferences(),
        CreatePushDelivery(),
        CreateIdentityTokenNonces(),
        CreateHealthSampleCounts(),
        AddAccountDeletingAt(),
        AddAuditCheckpoints(),
        AddDeviceInstallHash(),
        KeyReminderClaims(),
        AddJoinedEventID(),
        SealProfileCycleDates(),
        SealDailyRecommendations(),
        IndexWorkoutLogsNewestFirst(),
        CreateCycleSignals(),
        CreateProfilePhotos(),
        CreateWorkoutMedia(),
        // The operator's console (issue 35).
        CreateConsoleSessions(),
        CreateOperatorAudit(),
        CreateWebhookFailures(),
        // Product analytics (issue 35).
        CreateAnalyticsEvents(),
        // Remote config (issue 39).
        CreateRemoteConfig(),
        // App reports (issue 39).
        CreateAppReports(),
        // Media: photo thumbnails and content digests (issue 36).
        AddProfilePhotoThumbnails(),
        AddWorkoutMediaDigest(),
        // Writes at twice PocketBase's pace (issue 38).
        MoveAuditHeadsWithTheirEntries(),
        // Reports bounded, flags public by choice (issue 53).
        CreateAppReportNames(),
        AddRemoteConfigPublic(),
        // PostgreSQL at PocketBase's pace per request (issue 55).
        PublishEventsAtCommit(),
        AddAuditHeadPreviousHash(),
        AddAuditAppendFunction(),
        PublishEachPendingEventByPosition(),
    ]
}

extension MigrationRunner {
    /// A runner over every migration of this build.
    package static func forServer(database: Database, logger: Logger) -> MigrationRunner {
        MigrationRunner(database: database, migrations: FitBaseMigrations.all, logger: logger)
    }
}
