-- Argo CD health of a planwarden.dev Instance, from the status the planwarden controller
-- writes (manifests/argocd/README.md has the table of cases). The first that applies:
--   no status, or status.observedGeneration behind metadata.generation -> Progressing
--   PlanRunning reason TriggerRefused, CleanupFailed or
--     OperatorVersionNotFound (a request left undone until a person acts) -> Degraded
--   activePlan PENDING, IN_PROGRESS or ERROR (retrying)                -> Progressing
--   nothing runs and PlanRunning reason Paused, AwaitingWindow,
--     AwaitingApproval or Frozen (a request held on purpose)           -> Suspended
--   activePlan FATAL_ERROR                                             -> Degraded
--   activePlan ABORTED (a person's decision): Ready True -> Healthy, else Degraded
--   Ready True                                                         -> Healthy
--   Ready False: for READY_GRACE_SECONDS after its lastTransitionTime  -> Progressing,
--     after that (or when that time is missing)                        -> Degraded
--   Ready Unknown or absent                                            -> Progressing
-- Written for the sandbox Argo CD gives argocd-cm scripts: the base and table libraries and
-- require("os") for os.time, nothing else (no string or math library, no os.date).
local os = require("os")

-- How long Ready may stay False before the Instance counts as Degraded: long enough for
-- adapters to catch up with a spec change, short enough to surface a stuck Instance.
local READY_GRACE_SECONDS = 300

-- PlanRunning reasons that leave the spec's request undone until a person acts.
local REFUSALS = { TriggerRefused = true, CleanupFailed = true, OperatorVersionNotFound = true }

local RUNNING = { PENDING = true, IN_PROGRESS = true, ERROR = true }

-- PlanRunning reasons of a request held on purpose (maintenance, change governance).
local HELD = { Paused = true, AwaitingWindow = true, AwaitingApproval = true, Frozen = true }

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

-- "Reason: message", or whichever of the two is there.
local function explain(c)
  local reason = c.reason or ""
  local message = c.message or ""
  if reason ~= "" and message ~= "" then
    return reason .. ": " .. message
  end
  return reason .. message
end

local function floor(x)
  return x - x % 1
end

local function twoDigits(n)
  if n < 10 then
    return "0" .. n
  end
  return "" .. n
end

local function isLeapYear(y)
  return (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0
end

-- Seconds since the epoch as RFC 3339 text in UTC ("2026-01-31T08:05:00Z"). Without a
-- string library a timestamp cannot be parsed, but two such texts compare as their times
-- do; the controller writes lastTransitionTime in UTC, with or without milliseconds.
local function utcText(seconds)
  seconds = floor(seconds)
  local days = floor(seconds / 86400)
  local inDay = seconds - days * 86400
  local year = 1970
  while true do
    local length = 365
    if isLeapYear(year) then
      length = 366
    end
    if days < length then
      break
    end
    days = days - length
    year = year + 1
  end
  local february = 28
  if isLeapYear(year) then
    february = 29
  end
  local monthLengths = { 31, february, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
  local month = 1
  while days >= monthLengths[month] do
    days = days - monthLengths[month]
    month = month + 1
  end
  return year .. "-" .. twoDigits(month) .. "-" .. twoDigits(days + 1) .. "T" ..
    twoDigits(floor(inDay / 3600)) .. ":" .. twoDigits(floor(inDay % 3600 / 60)) .. ":" ..
    twoDigits(inDay % 60) .. "Z"
end

-- "plan deploy (run-1) IN_PROGRESS, 1/2 phases and 3/5 steps complete: <the run's message>"
local function describeRun(active, run, withProgress)
  local text = "plan " .. (active.name or "?") .. " (" .. (active.id or "?") .. ") " .. (active.status or "?")
  if run == nil then
    return text
  end
  if withProgress and run.phases ~= nil then
    local phasesDone, phases, stepsDone, steps = 0, 0, 0, 0
    for _, phase in ipairs(run.phases) do
      phases = phases + 1
      if phase.status == "COMPLETE" then
        phasesDone = phasesDone + 1
      end
      for _, step in ipairs(phase.steps or {}) do
        steps = steps + 1
        if step.status == "COMPLETE" then
          stepsDone = stepsDone + 1
        end
      end
    end
    text = text .. ", " .. phasesDone .. "/" .. phases .. " phases and " .. stepsDone .. "/" .. steps .. " steps complete"
  end
  if run.message ~= nil and run.message ~= "" then
    text = text .. ": " .. run.message
  end
  return text
end

local function health(obj)
  local status = obj.status
  if status == nil then
    return "Progressing", "waiting for the planwarden controller to report on the Instance"
  end
  local generation = obj.metadata and obj.metadata.generation
  if generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
    local seen = ""
    if status.observedGeneration ~= nil then
      seen = " (it last observed " .. status.observedGeneration .. ")"
    end
    return "Progressing", "waiting for the planwarden controller to observe generation " .. generation .. seen
  end

  local active = status.activePlan
  local run = nil
  if active ~= nil and status.planStatus ~= nil then
    run = status.planStatus[active.name]
  end
  local running = active ~= nil and RUNNING[active.status]

  local planRunning = findCondition(status, "PlanRunning")
  if planRunning ~= nil and planRunning.reason ~= nil and REFUSALS[planRunning.reason] then
    if running then
      return "Degraded", explain(planRunning) .. " (meanwhile plan " .. (active.name or "?") .. " (" ..
        (active.id or "?") .. ") is " .. active.status .. ")"
    end
    return "Degraded", explain(planRunning)
  end

  -- A request maintenance or change governance holds (a pause, outside every window, awaiting
  -- approval, a PlanPolicy freeze) waits on purpose: Suspended, not Degraded or Progressing,
  -- while no run goes on (a run started in a window is never stopped).
  if not running and planRunning ~= nil and HELD[planRunning.reason] then
    return "Suspended", explain(planRunning)
  end

  local ready = findCondition(status, "Ready")
  if active ~= nil then
    if running then
      local text = describeRun(active, run, true)
      if planRunning ~= nil and planRunning.reason == "PlanBusy" then
        -- A request queued behind this run: it starts by itself when the run ends.
        text = text .. "; " .. explain(planRunning)
      end
      return "Progressing", text
    end
    if active.status == "FATAL_ERROR" then
      return "Degraded", describeRun(active, run, false)
    end
    if active.status == "ABORTED" then
      -- Aborting is a person's decision: it is no fault while the Instance stays Ready.
      local readyText = "Ready is absent"
      if ready ~= nil then
        readyText = "Ready is " .. (ready.status or "Unknown") .. " (" .. explain(ready) .. ")"
      end
      if ready ~= nil and ready.status == "True" then
        return "Healthy", describeRun(active, run, false) .. "; " .. readyText
      end
      return "Degraded", describeRun(active, run, false) .. "; " .. readyText
    end
  end

  if ready == nil then
    return "Progressing", "waiting for the Ready condition"
  end
  if ready.status == "True" then
    return "Healthy", explain(ready)
  end
  if ready.status == "False" then
    local since = ready.lastTransitionTime
    if since ~= nil and since > utcText(os.time() - READY_GRACE_SECONDS) then
      return "Progressing", "Ready is False since " .. since .. " (Degraded after " .. READY_GRACE_SECONDS ..
        " s): " .. explain(ready)
    end
    if since == nil then
      return "Degraded", "Ready is False: " .. explain(ready)
    end
    return "Degraded", "Ready is False since " .. since .. ": " .. explain(ready)
  end
  return "Progressing", "Ready is " .. (ready.status or "Unknown") .. ": " .. explain(ready)
end

local hs = {}
hs.status, hs.message = health(obj)
return hs
