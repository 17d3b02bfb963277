import FitBaseAPI

/// The generated `APIProtocol`, answered by forwarding each operation to its feature's controller.
///
/// A class: the generated server copies its handler into every request's closures, and copying a struct of seventeen
/// controllers retained and released each of their references per request (6 % of the CPU of `/healthz`).
final class APIHandler: APIProtocol {
    let serviceStatus: ServiceStatusController
    let auth: AuthController
    let providers: ProviderSignInController
    let me: MeController
    let credentials: CredentialsController
    let accountPages: AccountPagesController
    let catalog: CatalogController
    let cycle: CycleController
    let history: HistoryController
    let plans: PlanController
    let recommendations: RecommendationController
    let sync: SyncController
    let billing: BillingController
    let health: HealthController
    let groups: GroupController
    let challenges: ChallengeController
    let events: EventStreamController
    let devices: DeviceController

    init(
        serviceStatus: ServiceStatusController,
        auth: AuthController,
        providers: ProviderSignInController,
        me: MeController,
        credentials: CredentialsController,
        accountPages: AccountPagesController,
        catalog: CatalogController,
        cycle: CycleController,
        history: HistoryController,
        plans: PlanController,
        recommendations: RecommendationController,
        sync: SyncController,
        billing: BillingController,
        health: HealthController,
        groups: GroupController,
        challenges: ChallengeController,
        events: EventStreamController,
        devices: DeviceController
    ) {
        self.serviceStatus = serviceStatus
        self.auth = auth
        self.providers = providers
        self.me = me
        self.credentials = credentials
        self.accountPages = accountPages
        self.catalog = catalog
        self.cycle = cycle
        self.history = history
        self.plans = plans
        self.recommendations = recommendations
        self.sync = sync
        self.billing = billing
        self.health = health
        self.groups = groups
        self.challenges = challenges
        self.events = events
        self.devices = devices
    }

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        try await serviceStatus.getHealth(input)
    }

    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        try await serviceStatus.getReadiness(input)
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        try await serviceStatus.getOpenAPIDocument(input)
    }

    // MARK: Accounts

    func getJWKS(_ input: Operations.GetJWKS.Input) async throws -> Operations.GetJWKS.Output {
        try await auth.getJWKS(input)
    }

    func signUp(_ input: Operations.SignUp.Input) async throws -> Operations.SignUp.Output {
        try await auth.signUp(input)
    }

    func signIn(_ input: Operations.SignIn.Input) async throws -> Operations.SignIn.Output {
        try await auth.signIn(input)
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        try await auth.refreshSession(input)
    }

    func signOut(_ input: Operations.SignOut.Input) async throws -> Operations.SignOut.Output {
        try await auth.signOut(input)
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        try await me.getMe(input)
    }

    func listSessions(_ input: Operations.ListSessions.Input) async throws -> Operations.ListSessions.Output {
        try await me.listSessions(input)
    }

    func deleteSession(_ input: Operations.DeleteSession.Input) async throws -> Operations.DeleteSession.Output {
        try await me.deleteSession(input)
    }

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        try await devices.listDevices(input)
    }

    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        try await devices.registerDevice(input)
    }

    func deleteDevice(_ input: Operations.DeleteDevice.Input) async throws -> Operations.DeleteDevice.Output {
        try await devices.deleteDevice(input)
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        try await me.updateMe(input)
    }

    func deleteMe(_ input: Operations.DeleteMe.Input) async throws -> Operations.DeleteMe.Output {
        try await me.deleteMe(input)
    }

    func exportMe(_ input: Operations.ExportMe.Input) async throws -> Operations.ExportMe.Output {
        try await me.exportMe(input)
    }

    func listConsents(_ input: Operations.ListConsents.Input) async throws -> Operations.ListConsents.Output {
        try await me.listConsents(input)
    }

    func recordConsent(_ input: Operations.RecordConsent.Input) async throws -> Operations.RecordConsent.Output {
        try await me.recordConsent(input)
    }

    func signInWithApple(_ input: Operations.SignInWithApple.Input) async throws -> Operations.SignInWithApple.Output {
        try await providers.signInWithApple(input)
    }

    func signInWithGoogle(_ input: Operations.SignInWithGoogle.Input) async throws -> Operations.SignInWithGoogle.Output {
        try await providers.signInWithGoogle(input)
    }

    func receiveAppleNotification(_ input: Operations.ReceiveAppleNotification.Input) async throws -> Operations.ReceiveAppleNotification.Output {
        try await providers.receiveAppleNotification(input)
    }

    func requestEmailVerification(_ input: Operations.RequestEmailVerification.Input) async throws -> Operations.RequestEmailVerification.Output {
        try await credentials.requestEmailVerification(input)
    }

    func verifyEmail(_ input: Operations.VerifyEmail.Input) async throws -> Operations.VerifyEmail.Output {
        try await credentials.verifyEmail(input)
    }

    func requestPasswordReset(_ input: Operations.RequestPasswordReset.Input) async throws -> Operations.RequestPasswordReset.Output {
        try await credentials.requestPasswordReset(input)
    }

    func resetPassword(_ input: Operations.ResetPassword.Input) async throws -> Operations.ResetPassword.Output {
        try await credentials.resetPassword(input)
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        try await credentials.changePassword(input)
    }

    func changeEmail(_ input: Operations.ChangeEmail.Input) async throws -> Operations.ChangeEmail.Output {
        try await credentials.changeEmail(input)
    }

    func getEmailVerificationPage(_ input: Operations.GetEmailVerificationPage.Input) async throws -> Operations.GetEmailVerificationPage.Output {
        try await accountPages.getEmailVerificationPage(input)
    }

    func submitEmailVerificationPage(_ input: Operations.SubmitEmailVerificationPage.Input) async throws -> Operations.SubmitEmailVerificationPage.Output {
        try await accountPages.submitEmailVerificationPage(input)
    }

    func getPasswordResetPage(_ input: Operations.GetPasswordResetPage.Input) async throws -> Operations.GetPasswordResetPage.Output {
        try await accountPages.getPasswordResetPage(input)
    }

    func submitPasswordResetPage(_ input: Operations.SubmitPasswordResetPage.Input) async throws -> Operations.SubmitPasswordResetPage.Output {
        try await accountPages.submitPasswordResetPage(input)
    }

    // MARK: Catalog

    func listWorkouts(_ input: Operations.ListWorkouts.Input) async throws -> Operations.ListWorkouts.Output {
        try await catalog.listWorkouts(input)
    }

    func listFeaturedWorkouts(_ input: Operations.ListFeaturedWorkouts.Input) async throws -> Operations.ListFeaturedWorkouts.Output {
        try await catalog.listFeaturedWorkouts(input)
    }

    func listWorkoutsForPhase(_ input: Operations.ListWorkoutsForPhase.Input) async throws -> Operations.ListWorkoutsForPhase.Output {
        try await catalog.listWorkoutsForPhase(input)
    }

    func getWorkout(_ input: Operations.GetWorkout.Input) async throws -> Operations.GetWorkout.Output {
        try await catalog.getWorkout(input)
    }

    func listPrograms(_ input: Operations.ListPrograms.Input) async throws -> Operations.ListPrograms.Output {
        try await catalog.listPrograms(input)
    }

    func getProgram(_ input: Operations.GetProgram.Input) async throws -> Operations.GetProgram.Output {
        try await catalog.getProgram(input)
    }

    func createWorkout(_ input: Operations.CreateWorkout.Input) async throws -> Operations.CreateWorkout.Output {
        try await catalog.createWorkout(input)
    }

    func replaceWorkout(_ input: Operations.ReplaceWorkout.Input) async throws -> Operations.ReplaceWorkout.Output {
        try await catalog.replaceWorkout(input)
    }

    func deleteWorkout(_ input: Operations.DeleteWorkout.Input) async throws -> Operations.DeleteWorkout.Output {
        try await catalog.deleteWorkout(input)
    }

    // MARK: Cycle

    func logPeriod(_ input: Operations.LogPeriod.Input) async throws -> Operations.LogPeriod.Output {
        try await cycle.logPeriod(input)
    }

    func updatePeriod(_ input: Operations.UpdatePeriod.Input) async throws -> Operations.UpdatePeriod.Output {
        try await cycle.updatePeriod(input)
    }

    func deletePeriod(_ input: Operations.DeletePeriod.Input) async throws -> Operations.DeletePeriod.Output {
        try await cycle.deletePeriod(input)
    }

    func getCycleHistory(_ input: Operations.GetCycleHistory.Input) async throws -> Operations.GetCycleHistory.Output {
        try await cycle.getCycleHistory(input)
    }

    func getCurrentCycle(_ input: Operations.GetCurrentCycle.Input) async throws -> Operations.GetCurrentCycle.Output {
        try await cycle.getCurrentCycle(input)
    }

    func getCyclePredictions(_ input: Operations.GetCyclePredictions.Input) async throws -> Operations.GetCyclePredictions.Output {
        try await cycle.getCyclePredictions(input)
    }

    // MARK: History

    func logWorkout(_ input: Operations.LogWorkout.Input) async throws -> Operations.LogWorkout.Output {
        try await history.logWorkout(input)
    }

    func listHistory(_ input: Operations.ListHistory.Input) async throws -> Operations.ListHistory.Output {
        try await history.listHistory(input)
    }

    func deleteWorkoutLog(_ input: Operations.DeleteWorkoutLog.Input) async throws -> Operations.DeleteWorkoutLog.Output {
        try await history.deleteWorkoutLog(input)
    }

    func getHistoryStats(_ input: Operations.GetHistoryStats.Input) async throws -> Operations.GetHistoryStats.Output {
        try await history.getHistoryStats(input)
    }

    // MARK: Plans

    func listPlans(_ input: Operations.ListPlans.Input) async throws -> Operations.ListPlans.Output {
        try await plans.listPlans(input)
    }

    func createPlan(_ input: Operations.CreatePlan.Input) async throws -> Operations.CreatePlan.Output {
        try await plans.createPlan(input)
    }

    func getPlan(_ input: Operations.GetPlan.Input) async throws -> Operations.GetPlan.Output {
        try await plans.getPlan(input)
    }

    func replacePlan(_ input: Operations.ReplacePlan.Input) async throws -> Operations.ReplacePlan.Output {
        try await plans.replacePlan(input)
    }

    func deletePlan(_ input: Operations.DeletePlan.Input) async throws -> Operations.DeletePlan.Output {
        try await plans.deletePlan(input)
    }

    func getPlanProgression(_ input: Operations.GetPlanProgression.Input) async throws -> Operations.GetPlanProgression.Output {
        try await plans.getPlanProgression(input)
    }

    // MARK: Recommendations

    func getTodayRecommendations(_ input: Operations.GetTodayRecommendations.Input) async throws -> Operations.GetTodayRecommendations.Output {
        try await recommendations.getTodayRecommendations(input)
    }

    func refreshRecommendations(_ input: Operations.RefreshRecommendations.Input) async throws -> Operations.RefreshRecommendations.Output {
        try await recommendations.refreshRecommendations(input)
    }

    func getWeekRecommendations(_ input: Operations.GetWeekRecommendations.Input) async throws -> Operations.GetWeekRecommendations.Output {
        try await recommendations.getWeekRecommendations(input)
    }

    // MARK: Sync

    func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output {
        try await sync.getSyncChanges(input)
    }

    func pushSyncMutations(_ input: Operations.PushSyncMutations.Input) async throws -> Operations.PushSyncMutations.Output {
        try await sync.pushSyncMutations(input)
    }

    // MARK: Billing

    func getSubscription(_ input: Operations.GetSubscription.Input) async throws -> Operations.GetSubscription.Output {
        try await billing.getSubscription(input)
    }

    func getFeatures(_ input: Operations.GetFeatures.Input) async throws -> Operations.GetFeatures.Output {
        try await billing.getFeatures(input)
    }

    func submitAppStoreTransaction(_ input: Operations.SubmitAppStoreTransaction.Input) async throws -> Operations.SubmitAppStoreTransaction.Output {
        try await billing.submitAppStoreTransaction(input)
    }

    func receiveAppStoreNotification(_ input: Operations.ReceiveAppStoreNotification.Input) async throws -> Operations.ReceiveAppStoreNotification.Output {
        try await billing.receiveAppStoreNotification(input)
    }

    func receiveStripeEvent(_ input: Operations.ReceiveStripeEvent.Input) async throws -> Operations.ReceiveStripeEvent.Output {
        try await billing.receiveStripeEvent(input)
    }

    // MARK: Health

    func uploadHealthSamples(_ input: Operations.UploadHealthSamples.Input) async throws -> Operations.UploadHealthSamples.Output {
        try await health.uploadHealthSamples(input)
    }

    func listHealthSamples(_ input: Operations.ListHealthSamples.Input) async throws -> Operations.ListHealthSamples.Output {
        try await health.listHealthSamples(input)
    }

    func deleteHealthSample(_ input: Operations.DeleteHealthSample.Input) async throws -> Operations.DeleteHealthSample.Output {
        try await health.deleteHealthSample(input)
    }

    func getHealthSummary(_ input: Operations.GetHealthSummary.Input) async throws -> Operations.GetHealthSummary.Output {
        try await health.getHealthSummary(input)
    }

    func listMyAuditEntries(_ input: Operations.ListMyAuditEntries.Input) async throws -> Operations.ListMyAuditEntries.Output {
        try await health.listMyAuditEntries(input)
    }

    // MARK: Social

    func createGroup(_ input: Operations.CreateGroup.Input) async throws -> Operations.CreateGroup.Output {
        try await groups.createGroup(input)
    }

    func getGroup(_ input: Operations.GetGroup.Input) async throws -> Operations.GetGroup.Output {
        try await groups.getGroup(input)
    }

    func deleteGroup(_ input: Operations.DeleteGroup.Input) async throws -> Operations.DeleteGroup.Output {
        try await groups.deleteGroup(input)
    }

    func listGroupMembers(_ input: Operations.ListGroupMembers.Input) async throws -> Operations.ListGroupMembers.Output {
        try await groups.listGroupMembers(input)
    }

    func removeGroupMember(_ input: Operations.RemoveGroupMember.Input) async throws -> Operations.RemoveGroupMember.Output {
        try await groups.removeGroupMember(input)
    }

    func leaveGroup(_ input: Operations.LeaveGroup.Input) async throws -> Operations.LeaveGroup.Output {
        try await groups.leaveGroup(input)
    }

    func createGroupInvite(_ input: Operations.CreateGroupInvite.Input) async throws -> Operations.CreateGroupInvite.Output {
        try await groups.createGroupInvite(input)
    }

    func listGroupInvites(_ input: Operations.ListGroupInvites.Input) async throws -> Operations.ListGroupInvites.Output {
        try await groups.listGroupInvites(input)
    }

    func revokeGroupInvite(_ input: Operations.RevokeGroupInvite.Input) async throws -> Operations.RevokeGroupInvite.Output {
        try await groups.revokeGroupInvite(input)
    }

    func getCurrentGroup(_ input: Operations.GetCurrentGroup.Input) async throws -> Operations.GetCurrentGroup.Output {
        try await groups.getCurrentGroup(input)
    }

    func listGroupChallenges(_ input: Operations.ListGroupChallenges.Input) async throws -> Operations.ListGroupChallenges.Output {
        try await challenges.listGroupChallenges(input)
    }

    func previewInvite(_ input: Operations.PreviewInvite.Input) async throws -> Operations.PreviewInvite.Output {
        try await groups.previewInvite(input)
    }

    func revokeInvite(_ input: Operations.RevokeInvite.Input) async throws -> Operations.RevokeInvite.Output {
        try await groups.revokeInvite(input)
    }

    func acceptInvite(_ input: Operations.AcceptInvite.Input) async throws -> Operations.AcceptInvite.Output {
        try await groups.acceptInvite(input)
    }

    func getAppSiteAssociation(_ input: Operations.GetAppSiteAssociation.Input) async throws -> Operations.GetAppSiteAssociation.Output {
        try await groups.getAppSiteAssociation(input)
    }

    func getCurrentChallenges(_ input: Operations.GetCurrentChallenges.Input) async throws -> Operations.GetCurrentChallenges.Output {
        try await challenges.getCurrentChallenges(input)
    }

    func getLeaderboard(_ input: Operations.GetLeaderboard.Input) async throws -> Operations.GetLeaderboard.Output {
        try await challenges.getLeaderboard(input)
    }

    func listNotifications(_ input: Operations.ListNotifications.Input) async throws -> Operations.ListNotifications.Output {
        try await challenges.listNotifications(input)
    }

    func markNotificationRead(_ input: Operations.MarkNotificationRead.Input) async throws -> Operations.MarkNotificationRead.Output {
        try await challenges.markNotificationRead(input)
    }

    func markAllNotificationsRead(_ input: Operations.MarkAllNotificationsRead.Input) async throws -> Operations.MarkAllNotificationsRead.Output {
        try await challenges.markAllNotificationsRead(input)
    }

    func streamEvents(_ input: Operations.StreamEvents.Input) async throws -> Operations.StreamEvents.Output {
        try await events.streamEvents(input)
    }
}
