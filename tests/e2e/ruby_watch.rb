# ruby_watch.rb - Ruby's kubeclient (Debian's ruby-kubeclient) against
# `fakeapi serve`, for test_ruby_watch.sh. kubeclient watches only through
# the legacy /api/v1/watch/... paths.
#
#   ruby ruby_watch.rb URL NAMESPACE follow
#     list the ConfigMaps (prints "LIST <rv> <names>"), watch from the list's
#     resourceVersion and print each event as "EVENT <type> <name> <rv> <v>";
#     when the server ends the stream print "CLOSED <last rv>" and watch again
#     from the last resourceVersion seen; stop after the DELETED of "stop".
#   ruby ruby_watch.rb URL NAMESPACE from RV
#     watch from RV and print the first event ("EVENT ..." or, for an ERROR,
#     "ERROR <code> <reason>").
#
# Every line is flushed at once: the shell script waits for them.
require 'kubeclient'

url, ns, mode, arg = ARGV
client = Kubeclient::Client.new("#{url}/api", 'v1',
                                auth_options: { bearer_token: 'fakeapi-e2e' })
$stdout.sync = true

def show(notice)
  obj = notice.object
  if notice.type == 'ERROR'
    puts "ERROR #{obj.code} #{obj.reason}"
  else
    v = obj.data ? obj.data.v : ''
    puts "EVENT #{notice.type} #{obj.metadata.name} #{obj.metadata.resourceVersion} #{v}"
  end
end

case mode
when 'follow'
  list = client.get_config_maps(namespace: ns)
  puts "LIST #{list.resourceVersion} #{list.map { |cm| cm.metadata.name }.join(',')}"
  last = list.resourceVersion
  streams = 0
  loop do
    streams += 1
    abort "too many watches (#{streams})" if streams > 10
    done = false
    client.watch_config_maps(namespace: ns, resource_version: last) do |notice|
      show(notice)
      abort 'ERROR event while following' if notice.type == 'ERROR'
      last = notice.object.metadata.resourceVersion
      if notice.type == 'DELETED' && notice.object.metadata.name == 'stop'
        done = true
        break
      end
    end
    break if done
    puts "CLOSED #{last}"
  end
  puts 'DONE'
when 'from'
  client.watch_config_maps(namespace: ns, resource_version: arg) do |notice|
    show(notice)
    break
  end
else
  abort "usage: #{$PROGRAM_NAME} URL NAMESPACE follow|from RV"
end
