package main

import "github.com/capwin/capwin/nodehealth/health"

func probes() health.Probes { return health.NodeProbes{} }
