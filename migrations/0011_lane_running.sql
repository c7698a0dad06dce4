-- The running job of each lane, found with one seek: a claim must not start any job of a lane
-- while another of that lane runs, and the lane's head (its oldest waiting or running job) is
-- not enough to tell, because a replayed, re-opened, resumed or released job can be older than
-- the one running. jobs_lane_active cannot answer it without walking the lane's whole backlog.
-- Running jobs are few (one per job thread, and stuck ones), so this index stays tiny.
CREATE INDEX jobs_lane_running ON jobs (lane) WHERE state = 'running';
