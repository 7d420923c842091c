-- Argo CD health of a planwarden.dev FleetRollout (one plan or upgrade across many
-- Instances, in waves), from the conditions the planwarden controller writes
-- (manifests/argocd/README.md has the table of cases). The first that applies:
--   no status, or status.observedGeneration behind metadata.generation -> Progressing
--   Failed True (the failure budget is exceeded)                       -> Degraded
--   Complete True (every target ended within the budget)               -> Healthy
--   Paused True (spec.paused: nothing new starts)                      -> Suspended
--   anything else (targets running, waiting or pending)                -> Progressing
-- Written for the sandbox Argo CD gives argocd-cm scripts: it needs only the base library.

local function findCondition(status, conditionType)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

local function health(obj)
  local status = obj.status
  if status == nil then
    return "Progressing", "waiting for the planwarden controller to resolve the rollout's targets"
  end
  local generation = obj.metadata and obj.metadata.generation
  if generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
    return "Progressing", "waiting for the planwarden controller to observe generation " .. generation
  end
  local progress = status.progress or "?"
  local failed = findCondition(status, "Failed")
  if failed ~= nil and failed.status == "True" then
    return "Degraded", (failed.message or failed.reason or "failed") .. " (" .. progress .. " completed)"
  end
  local complete = findCondition(status, "Complete")
  if complete ~= nil and complete.status == "True" then
    return "Healthy", complete.message or progress
  end
  local paused = findCondition(status, "Paused")
  if paused ~= nil and paused.status == "True" then
    return "Suspended", "paused at " .. progress .. " completed; resume with kubectl planwarden fleet resume " .. (obj.metadata.name or "NAME")
  end
  local progressing = findCondition(status, "Progressing")
  if progressing ~= nil and progressing.message ~= nil then
    return "Progressing", progressing.message .. " (" .. progress .. " completed)"
  end
  return "Progressing", progress .. " completed"
end

local hs = {}
hs.status, hs.message = health(obj)
return hs
