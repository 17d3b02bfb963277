// The domain vocabulary (phases, tiers, workout types, calendar days …) and the SDK's records and sync status appear
// in the services' signatures: importing FitBaseKit brings them along.
@_exported import FitBaseClient
@_exported import FitBaseCore
